/**
 * What a cold start of the proxy must get into the kernel for the
 * benchmark cluster (bench/controller-objects.mjs), taken from the
 * controller's own planner (desired state against an empty kernel), and the
 * pieces the floor programs the same kernel state from: the IPVS requests
 * as raw netlink messages (the addon's encoder, as bench/ipvs-rules.mjs
 * does), the ipset entries per set, the addresses to bind, and the
 * iptables-restore input.
 */
import { desiredState } from '../kube-proxy-ipvs/dist/lib/desired/known-objects.js';
import { defaultProxyConfig } from '../kube-proxy-ipvs/dist/lib/kubernetes/model.js';
import { emptyCurrentState } from '../kube-proxy-ipvs/dist/lib/plan/kernel-state.js';
import { plan } from '../kube-proxy-ipvs/dist/lib/plan/planner.js';
import { CMD } from '../dist/lib/ipvs/constants.js';
import { RequestWriter } from '../dist/lib/ipvs/request-writer.js';
import { native } from '../dist/lib/netlink/binding.js';
import { NODE_IP, NODE_NAME, service, slice } from './controller-objects.mjs';

/** The cold-start plan for N services, split by what programs it. */
export function coldStartPlan(services) {
  const objects = { services: [], endpointSlices: [] };
  for (let i = 0; i < services; i++) {
    objects.services.push(service(i));
    objects.endpointSlices.push(slice(i));
  }
  // The proxy's defaults (scheduler rr, ...); only the node's InternalIP comes from the Node object.
  const desired = desiredState(objects, { name: NODE_NAME, addresses: [NODE_IP] }, defaultProxyConfig({ scheduler: 'rr' }));
  const ops = plan(desired, emptyCurrentState());
  const out = { ipvs: [], sets: [], addresses: [], iptables: [] };
  const sets = new Map();
  for (const op of ops) {
    if (op.kind === 'ipvs') out.ipvs.push(op.batch);
    else if (op.kind === 'address') out.addresses.push(op.address);
    else if (op.kind === 'iptables') out.iptables.push({ family: op.family, restore: op.restore });
    else if (op.op === 'create') sets.set(op.set, { name: op.set, type: op.type, options: op.options, entries: [] });
    else if (op.op === 'add') sets.get(op.set).entries.push(...op.entries);
    else throw new Error(`unexpected cold-start operation ${op.kind} ${op.op}`);
  }
  out.sets = [...sets.values()];
  out.counts = {
    virtualServers: out.ipvs.filter((o) => o.op === 'addService').length,
    realServers: out.ipvs.filter((o) => o.op === 'addDestination').length,
    ipsetEntries: out.sets.reduce((n, s) => n + s.entries.length, 0),
    sets: out.sets.length,
    addresses: out.addresses.length,
    operations: ops.length,
  };
  return out;
}

/** The IPVS batch ops as the netlink requests Ipvs.apply sends (family id 0: the floor probe patches in the real one), back to back. */
export function ipvsMessages(ops) {
  const w = new RequestWriter(ops.length);
  for (const o of ops) {
    if (o.op === 'addService') {
      w.begin(CMD.NEW_SERVICE);
      w.serviceSpec(o.service, 'service');
    } else if (o.op === 'addDestination') {
      w.begin(CMD.NEW_DEST);
      const af = w.serviceKeyOnly(o.service, 'service');
      w.destinationSpec(o.destination, af, 'destination');
    } else throw new Error(`unexpected IPVS op ${o.op} in a cold start`);
  }
  const bufs = [];
  for (const b of native.ipvsEncode(w.records(), w.count, w.strings(), 0)) {
    bufs.push(b);
    const pad = (4 - (b.length % 4)) % 4;
    if (pad) bufs.push(Buffer.alloc(pad));
  }
  return Buffer.concat(bufs);
}
