/**
 * The logging checks kube-proxy's validation makes through component-base
 * (logs/api/v1 Validate, with the feature gates the configuration sets):
 * --vmodule only with the text format, the json format only while
 * LoggingBetaOptions is on, the split-stream and info-buffer options only
 * with LoggingAlphaOptions, and vmodule entries and verbosities klog can
 * take. Each problem names the flag and the field, then upstream's reason.
 */
import type { KubeProxyConfiguration } from './config-schema.js';
import { featureGateEnabled } from './feature-gate-state.js';

const MAX_INT32 = 2 ** 31 - 1;

const QUANTITY_SCALE: Record<string, number> = {
  '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/**
 * resource.Quantity's Value() is not 0. Value() rounds away from zero, so
 * any amount other than zero, negative ones included, is set. Text the
 * decoder let through but cannot be read counts as set.
 */
function quantityIsSet(text: string): boolean {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+)|([a-zA-Z]*))$/.exec(text);
  if (!m) return text !== '';
  const scale = m[2] !== undefined ? 10 ** Number(m[2]) : QUANTITY_SCALE[m[3] ?? ''];
  if (scale === undefined) return true;
  return Number(m[1]) * scale !== 0;
}

export function loggingProblems(c: KubeProxyConfiguration): string[] {
  const l = c.logging;
  const gates = c.featureGates ?? {};
  const out: string[] = [];
  if (l.format === 'json' && !featureGateEnabled(gates, 'LoggingBetaOptions')) {
    out.push('--logging-format (logging.format): Forbidden: Log format json is disabled, see LoggingBetaOptions feature');
  }
  if (l.verbosity > MAX_INT32) out.push(`-v (logging.verbosity): Invalid value: ${l.verbosity}: Must be <= ${MAX_INT32}`);
  const vmodule = l.vmodule ?? [];
  if (vmodule.length > 0 && l.format !== '' && l.format !== 'text') out.push('--vmodule (logging.vmodule): Forbidden: Only supported for text log format');
  vmodule.forEach((item, i) => {
    const at = `--vmodule (logging.vmodule[${i}])`;
    if (item.filePattern === '') out.push(`${at}: Required value: File pattern must not be empty`);
    if (/[=,]/.test(item.filePattern)) out.push(`${at}: Invalid value: ${JSON.stringify(item.filePattern)}: File pattern must not contain equal sign or comma`);
    if (item.verbosity > MAX_INT32) out.push(`${at}: Invalid value: ${item.verbosity}: Must be <= ${MAX_INT32}`);
  });
  // validateFormatOptions: text's options, then json's, each whatever the format in use.
  if (!featureGateEnabled(gates, 'LoggingAlphaOptions')) {
    for (const format of ['text', 'json'] as const) {
      const o = l.options[format];
      const disabled = 'Forbidden: Feature LoggingAlphaOptions is disabled';
      if (o.splitStream) out.push(`--log-${format}-split-stream (logging.options.${format}.splitStream): ${disabled}`);
      if (quantityIsSet(o.infoBufferSize)) out.push(`--log-${format}-info-buffer-size (logging.options.${format}.infoBufferSize): ${disabled}`);
    }
  }
  return out;
}
