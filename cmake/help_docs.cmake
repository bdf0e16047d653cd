# Writes the man page and the bash and zsh completions of meshplan from its own --help texts, so
# they cannot drift from the options the binary accepts. Run by the build (cli/CMakeLists.txt):
#   cmake -DMESHPLAN=<binary> -DVERSION=<x.y.z> -DOUT_DIR=<folder> -P cmake/help_docs.cmake
# Outputs in OUT_DIR: meshplan.1, meshplan.bash, _meshplan (zsh).
cmake_minimum_required(VERSION 3.20)

# Runs `meshplan ARGS --help` and returns its text with the binary's path replaced by its name.
function(help_of out_var)
  execute_process(COMMAND "${MESHPLAN}" ${ARGN} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help_docs: '${MESHPLAN} ${ARGN} --help' exited ${rc}")
  endif()
  string(REPLACE "${MESHPLAN}" "meshplan" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Names listed under "Subcommands:" in a help text.
function(subcommands_of text out_var)
  set(names "")
  string(FIND "${text}" "\nSubcommands:\n" at)
  if(at GREATER -1)
    string(SUBSTRING "${text}" ${at} -1 section)
    string(REGEX MATCHALL "\n  [a-z][a-z0-9-]*" found "${section}")
    foreach(f IN LISTS found)
      string(STRIP "${f}" f)
      list(APPEND names "${f}")
    endforeach()
  endif()
  set(${out_var} "${names}" PARENT_SCOPE)
endfunction()

# Long options ("--name") of a help text, in order, without duplicates.
function(options_of text out_var)
  string(REGEX MATCHALL "\n  (-[A-Za-z],)?--[a-z0-9-]+" found "${text}")
  set(opts "")
  foreach(f IN LISTS found)
    string(REGEX REPLACE ".*(--[a-z0-9-]+)" "\\1" f "${f}")
    list(APPEND opts "${f}")
  endforeach()
  list(REMOVE_DUPLICATES opts)
  set(${out_var} "${opts}" PARENT_SCOPE)
endfunction()

# A help text as a roff no-fill block: backslashes escaped, control characters at line starts
# neutralised.
function(roff_block text out_var)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out_var} ".nf\n${text}.fi\n" PARENT_SCOPE)
endfunction()

help_of(top)
string(REGEX MATCH "^[^\n]*" summary "${top}")
string(REGEX REPLACE "^meshplan: " "" summary "${summary}")
subcommands_of("${top}" commands)

set(man ".TH MESHPLAN 1 \"\" \"meshplan ${VERSION}\" \"User Commands\"\n")
string(APPEND man ".SH NAME\nmeshplan \\- ${summary}\n")
string(APPEND man ".SH SYNOPSIS\n.B meshplan\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n")
string(APPEND man ".B meshplan help\n[\\fICOMMAND\\fR]\n")
roff_block("${top}" block)
string(APPEND man ".SH DESCRIPTION\n${block}")
string(APPEND man ".SH COMMANDS\n")

set(all_words "help;${commands}")
set(bash_cases "")
set(zsh_cases "")
foreach(cmd IN LISTS commands)
  help_of(text ${cmd})
  roff_block("${text}" block)
  string(APPEND man ".SS ${cmd}\n${block}")
  options_of("${text}" opts)
  subcommands_of("${text}" subs)
  foreach(sub IN LISTS subs)
    help_of(sub_text ${cmd} ${sub})
    roff_block("${sub_text}" block)
    string(APPEND man ".SS \"${cmd} ${sub}\"\n${block}")
    options_of("${sub_text}" sub_opts)
    list(APPEND opts ${sub_opts})
    subcommands_of("${sub_text}" subsubs)
    foreach(subsub IN LISTS subsubs)
      help_of(subsub_text ${cmd} ${sub} ${subsub})
      roff_block("${subsub_text}" block)
      string(APPEND man ".SS \"${cmd} ${sub} ${subsub}\"\n${block}")
      options_of("${subsub_text}" subsub_opts)
      list(APPEND opts ${subsub_opts})
    endforeach()
    list(APPEND subs ${subsubs})
  endforeach()
  list(REMOVE_DUPLICATES opts)
  list(JOIN opts " " opts_text)
  list(JOIN subs " " subs_text)
  string(APPEND bash_cases "    ${cmd}) words=\"${subs_text} ${opts_text}\" ;;\n")
  string(APPEND zsh_cases "    ${cmd}) candidates=(${subs_text} ${opts_text}) ;;\n")
endforeach()
string(APPEND man ".SH FILES\n")
string(APPEND man "Shipped models, cluster topologies and calibration profiles are installed under\n")
string(APPEND man ".IR share/meshplan/ { models , topologies , profiles }\nof the install prefix.\n")
string(APPEND man ".SH SEE ALSO\nThe README of the meshplan repository.\n")
file(WRITE "${OUT_DIR}/meshplan.1" "${man}")

list(JOIN all_words " " words_text)
file(WRITE "${OUT_DIR}/meshplan.bash"
"# bash completion for meshplan, generated from its --help by cmake/help_docs.cmake.
_meshplan() {
  local cur=\"\${COMP_WORDS[COMP_CWORD]}\" words=\"\"
  if [ \"\$COMP_CWORD\" -eq 1 ]; then
    COMPREPLY=(\$(compgen -W \"${words_text}\" -- \"\$cur\"))
    return
  fi
  case \"\${COMP_WORDS[1]}\" in
    help) words=\"${words_text}\" ;;
${bash_cases}  esac
  if [[ \"\$cur\" == -* || \"\${COMP_WORDS[1]}\" == help ]]; then
    COMPREPLY=(\$(compgen -W \"\$words\" -- \"\$cur\"))
  else
    COMPREPLY=(\$(compgen -f -W \"\$words\" -- \"\$cur\"))
  fi
}
complete -o filenames -F _meshplan meshplan
")

file(WRITE "${OUT_DIR}/_meshplan"
"#compdef meshplan
# zsh completion for meshplan, generated from its --help by cmake/help_docs.cmake.
_meshplan() {
  local -a candidates
  if (( CURRENT == 2 )); then
    compadd -- ${words_text}
    return
  fi
  case \$words[2] in
    help) candidates=(${words_text}) ;;
${zsh_cases}  esac
  compadd -- \$candidates
  [[ \$words[2] == help ]] || _files
}
_meshplan \"\$@\"
")
