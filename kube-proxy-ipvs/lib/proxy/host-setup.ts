/**
 * What the proxy does to the host outside the Service rules, behind one
 * seam so unit tests run without touching the machine: the families the
 * host serves, the conntrack sysctls and the OOM score.
 */
import type { Logger } from 'pino';
import { type ConntrackSettings, conntrackIO, setConntrackSysctls } from '../kernel/conntrack-sysctls.js';
import { execIn } from '../kernel/exec.js';
import { detectHostFamilies, detectNftablesFamilies, type HostFamilies } from '../kernel/host-families.js';
import type { RulesBackend } from '../kubernetes/model.js';
import { applyOomScoreAdj } from './oom-score.js';

export interface HostSetup {
  families(): Promise<HostFamilies>;
  setConntrack(settings: ConntrackSettings, log: Logger): Promise<void>;
  applyOomScoreAdj(value: number | null, log: Logger): Promise<void>;
}

/** The real host; `netns`: the namespace programmed (--netns), default this process's; the families as the rules backend needs them. */
export function realHost(netns: string | undefined, backend: RulesBackend = 'iptables'): HostSetup {
  const exec = execIn(netns);
  return {
    families: () => (backend === 'nftables' ? detectNftablesFamilies(netns) : detectHostFamilies(exec)),
    setConntrack: (settings, log) => setConntrackSysctls(settings, conntrackIO(exec, { ownNamespace: netns === undefined }), log),
    applyOomScoreAdj: (value, log) => applyOomScoreAdj(value, log),
  };
}
