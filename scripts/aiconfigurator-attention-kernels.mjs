#!/usr/bin/env node
// Measured prompt-attention throughput of the serving engines' own kernels, from NVIDIA
// AIConfigurator's kernel database, as the attention samples of profiles/h100-*.yaml and
// profiles/h200-*.yaml, profiles/a100-published.yaml and profiles/b200-published.yaml hold them
// (kernels trtllm, trtllm-fp8kv, vllm, vllm-fp8kv, sglang, sglang-fp8kv; serving/step_time.cc
// prompt_attention_kernels).
//
// Usage: scripts/aiconfigurator-attention-kernels.mjs AIC_REPO GPU > samples.csv
//   Prints rows of a profile's attention_table (core/profile.cc), to go below its header line.
//   GPU: a100_sxm, h100_sxm, h200_sxm or b200_sxm (profiles/<gpu>-published.yaml, and the
//   measured H100/H200 profiles). AIC_REPO: a git clone of ai-dynamo/aiconfigurator holding commit
//   095f58a51c4c; run it from a folder where `npm install hyparquet hyparquet-compressors` put
//   those two packages.
//
// Reads aic-core/src/aiconfigurator_core/systems/data/<GPU>/attention/<engine>/<version>/
// context_attention_perf.parquet at that commit for one version of each engine (the oldest
// table of each engine on the GPU: TensorRT-LLM 1.2.0rc5, 1.0.0 on A100; vLLM 0.14.0, 0.19.0 on
// B200; SGLang 0.5.9), the
// prompt's causal attention over a fresh prompt of `isl` tokens for `batch_size` prompts. Per
// engine, KV-cache format, head dim and prompt length one sample: the median over the table's
// head counts (8 or more query heads, any KV heads) at the batch that fills an 8,192-token step
// (the engines' default step budget; one prompt from 8,192 tokens on), throughput in
// FlashAttention's convention (4 · batch · heads · head_dim · isl² / 2 FLOPs for a causal
// kernel) over the measured latency. A BF16 KV cache: the BF16 rows; an FP8 one: TensorRT-LLM's
// FP8 rows (its FP8 context FMHA, which its builder turns on with an FP8 cache, see
// serving/engine_preset.cc), vLLM's and SGLang's rows with an FP8 cache and BF16 math (the
// only ones vLLM's table has; SGLang's FP8-math rows time the same). TensorRT-LLM's rows without
// a sliding window only. Sorted, so the output is the same for the same input.
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

// The packages are looked up from the working directory (where `npm install` put them).
const here = createRequire(pathToFileURL(process.cwd() + '/').href)
const { parquetReadObjects } = await import(pathToFileURL(here.resolve('hyparquet')).href)
const { compressors } = await import(pathToFileURL(here.resolve('hyparquet-compressors')).href)

const COMMIT = '095f58a51c4ca8e61b66ec108d86f223f8d559ce'
const STEP_TOKENS = 8192
const MIN_HEADS = 8
const ISLS = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]
// engine directory, kernel name, {kv format: math format}
const ENGINES = [
  ['trtllm', 'trtllm', { bfloat16: 'bfloat16', fp8: 'fp8' }],
  ['vllm', 'vllm', { bfloat16: 'bfloat16', fp8: 'bfloat16' }],
  ['sglang', 'sglang', { bfloat16: 'bfloat16', fp8: 'bfloat16' }],
]
// The table's version per GPU and engine.
const VERSIONS = {
  a100_sxm: { trtllm: '1.0.0', vllm: '0.14.0', sglang: '0.5.9' },
  h100_sxm: { trtllm: '1.2.0rc5', vllm: '0.14.0', sglang: '0.5.9' },
  h200_sxm: { trtllm: '1.2.0rc5', vllm: '0.14.0', sglang: '0.5.9' },
  b200_sxm: { trtllm: '1.2.0rc5', vllm: '0.19.0', sglang: '0.5.9' },
}

const [repo, gpu] = process.argv.slice(2)
if (!repo || !(gpu in VERSIONS)) {
  console.error(`usage: aiconfigurator-attention-kernels.mjs AIC_REPO ${Object.keys(VERSIONS).join('|')}`)
  process.exit(2)
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const lines = []
for (const [engine, kernel, math] of ENGINES) {
  const version = VERSIONS[gpu][engine]
  const path = `aic-core/src/aiconfigurator_core/systems/data/${gpu}/attention/${engine}/${version}/context_attention_perf.parquet`
  const buf = execFileSync('git', ['-C', repo, 'show', `${COMMIT}:${path}`], { maxBuffer: 1 << 30 })
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const points = new Map()
  for (const r of await parquetReadObjects({ file, compressors })) {
    if (r.window_size !== undefined && Number(r.window_size) !== 0) continue
    const kv = r.kv_cache_dtype
    if (!(kv in math) || r.attn_dtype !== math[kv]) continue
    const isl = Number(r.isl), batch = Number(r.batch_size), heads = Number(r.num_heads)
    const d = Number(r.head_dim)
    if (!ISLS.includes(isl) || heads < MIN_HEADS) continue
    if (batch !== Math.max(1, STEP_TOKENS / isl)) continue
    const flops = (4 * batch * heads * d * isl * isl) / 2
    const key = `${kv === 'fp8' ? kernel + '-fp8kv' : kernel}|${d}|${isl}`
    if (!points.has(key)) points.set(key, [])
    points.get(key).push(flops / (Number(r.latency) * 1e-3) / 1e12)
  }
  const source = `AIConfigurator ${COMMIT.slice(0, 7)} ${gpu}/attention/${engine}/${version}/context_attention_perf.parquet (scripts/aiconfigurator-attention-kernels.mjs)`
  for (const [key, tflops] of points) {
    const [name, d, isl] = key.split('|')
    lines.push({
      name, d: Number(d), isl: Number(isl),
      text: `  ${name},${d},${isl},true,${median(tflops).toFixed(1)},,,${source}, median of ${tflops.length} head counts`,
    })
  }
}
lines.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.d - b.d || a.isl - b.isl))
for (const l of lines) console.log(l.text)
