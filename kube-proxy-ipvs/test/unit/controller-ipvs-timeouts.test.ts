/**
 * The IPVS connection timeouts (--ipvs-tcp-timeout and the others) are set
 * at start; a kernel that refuses them is logged, and the start goes on, as
 * upstream's proxier does ("Failed to configure IPVS timeouts").
 */
import t from 'tap';
import pino from 'pino';
import { NamespaceSession } from '../../lib/kernel/namespace-session.js';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';

function session(lines: string[]): NamespaceSession {
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  return new NamespaceSession({ config: defaultProxyConfig(), node: { name: 'node-a', addresses: [] }, ipvsTimeouts: { tcp: 900, tcpFin: 0, udp: 30 } }, defaultProxyConfig(), logger);
}

t.test('the timeouts set are the ones given, 0 left out', async (t) => {
  const sent: unknown[] = [];
  await session([]).setIpvsTimeouts({ ipvs: { setTimeouts: async (x: unknown) => void sent.push(x) } } as never);
  t.same(sent, [{ tcp: 900, udp: 30 }]);
});

t.test('a refusal is logged as upstream logs it, and the start goes on', async (t) => {
  const lines: string[] = [];
  const refused = Object.assign(new Error('Invalid argument'), { code: 'EINVAL' });
  await t.resolves(session(lines).setIpvsTimeouts({ ipvs: { setTimeouts: async () => Promise.reject(refused) } } as never));
  t.match(lines.map((l) => JSON.parse(l) as { msg: string; level: number; err: string }), [{ msg: 'Failed to configure IPVS timeouts', level: 50, err: 'Invalid argument' }]);
});
