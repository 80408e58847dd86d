/**
 * The IPVS rule set every IPVS benchmark programs: N TCP services, each with
 * D masquerading destinations (weight 1, scheduler wlc), as Ipvs.apply ops,
 * as `ipvsadm -R` input, and as raw netlink messages for the floor probe.
 */
import { native } from '../dist/lib/netlink/binding.js';
import { CMD } from '../dist/lib/ipvs/constants.js';
import { RequestWriter } from '../dist/lib/ipvs/request-writer.js';

export const DESTS_PER_SERVICE = 10;

/** Service i: 10.96.0.0/12 + i, port 80. */
export function serviceAddress(i) {
  const n = (10 << 24) + (96 << 16) + i;
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** Destination k of service i: 172.16.0.0/12 + i*D + k, port 8080. */
export function destAddress(i, k, d = DESTS_PER_SERVICE) {
  const n = (172 << 24) + (16 << 16) + i * d + k;
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** The Ipvs.apply ops, services first, each followed by its destinations. */
export function applyOps(services, d = DESTS_PER_SERVICE) {
  const ops = [];
  for (let i = 0; i < services; i++) {
    const service = { protocol: 'tcp', address: serviceAddress(i), port: 80 };
    ops.push({ op: 'addService', service: { ...service, scheduler: 'wlc' } });
    for (let k = 0; k < d; k++)
      ops.push({ op: 'addDestination', service, destination: { address: destAddress(i, k, d), port: 8080, forward: 'masq', weight: 1 } });
  }
  return ops;
}

/** The same rules for `ipvsadm -R`. */
export function restoreText(services, d = DESTS_PER_SERVICE) {
  const lines = [];
  for (let i = 0; i < services; i++) {
    const vip = `${serviceAddress(i)}:80`;
    lines.push(`-A -t ${vip} -s wlc`);
    for (let k = 0; k < d; k++) lines.push(`-a -t ${vip} -r ${destAddress(i, k, d)}:8080 -m -w 1`);
  }
  return lines.join('\n') + '\n';
}

/**
 * The netlink messages Ipvs.apply sends for those ops (the addon's own
 * encoder, family id 0: the probe patches in the real one), back to back.
 */
export function messages(services, d = DESTS_PER_SERVICE) {
  const w = new RequestWriter(services * (d + 1));
  for (const o of applyOps(services, d)) {
    if (o.op === 'addService') {
      w.begin(CMD.NEW_SERVICE);
      w.serviceSpec(o.service, 'service');
    } else {
      w.begin(CMD.NEW_DEST);
      const af = w.serviceKeyOnly(o.service, 'service');
      w.destinationSpec(o.destination, af, 'destination');
    }
  }
  const bufs = [];
  for (const b of native.ipvsEncode(w.records(), w.count, w.strings(), 0)) {
    const pad = (4 - (b.length % 4)) % 4;
    bufs.push(b);
    if (pad) bufs.push(Buffer.alloc(pad));
  }
  return Buffer.concat(bufs);
}
