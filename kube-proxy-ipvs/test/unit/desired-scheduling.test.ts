/**
 * Per-Service IPVS schedulers: the annotations (ours and kube-router's) as
 * read, the virtual servers they give, a change planned as an update in
 * place, and what is reported when they cannot be applied (invalid, or a
 * scheduler the kernel has not got).
 */
import t, { type Test } from 'tap';
import { NetlinkError, type BatchOp } from 'ipvs-netlink';
import { annotatedScheduling, flagNames, schedulingAnnotationsOf } from '../../lib/kubernetes/service-scheduling.js';
import { defaultProxyConfig, type NodeInfo, type Service } from '../../lib/kubernetes/model.js';
import { desiredState, KnownObjects, plannedState } from '../../lib/desired/known-objects.js';
import { describeReport } from '../../lib/desired/scheduling.js';
import { Mirror } from '../../lib/plan/mirror.js';
import { plan } from '../../lib/plan/planner.js';
import { planOutput } from '../../lib/plan/plan-json.js';
import type { Operation } from '../../lib/plan/kernel-state.js';
import { SchedulerModules } from '../../lib/kernel/scheduler-modules.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { idleCounters } from '../support/fake-controller.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';

const OURS = 'ipvs.kube-proxy-ipvs.io/scheduler';
const OURS_FLAGS = 'ipvs.kube-proxy-ipvs.io/scheduler-flags';
const KR = 'kube-router.io/service.scheduler';
const KR_FLAGS = 'kube-router.io/service.schedflags';

t.test('the annotations as read: what applies, and what is reported', async (t) => {
  const cases: Array<[string, Record<string, string>, unknown]> = [
    ['no annotation', {}, {}],
    ['ours, no flags: the scheduler\'s defaults', { [OURS]: 'mh' }, { scheduling: { scheduler: 'mh', annotation: OURS } }],
    ['ours, mh flags by ipvsadm\'s names', { [OURS]: 'mh', [OURS_FLAGS]: 'mh-fallback, mh-port' }, { scheduling: { scheduler: 'mh', flags: { sched1: true, sched2: true }, annotation: OURS } }],
    ['ours, sh flags', { [OURS]: 'sh', [OURS_FLAGS]: 'sh-port' }, { scheduling: { scheduler: 'sh', flags: { sched2: true }, annotation: OURS } }],
    ['ours, flag-N for any scheduler', { [OURS]: 'lc', [OURS_FLAGS]: 'flag-3' }, { scheduling: { scheduler: 'lc', flags: { sched3: true }, annotation: OURS } }],
    ['ours, flags given empty: none', { [OURS]: 'mh', [OURS_FLAGS]: '' }, { scheduling: { scheduler: 'mh', flags: {}, annotation: OURS } }],
    ['ours, an unknown scheduler', { [OURS]: 'fastest' }, { problem: { annotation: OURS, value: 'fastest', problem: /is not an IPVS scheduler; use one of rr, wrr, .*twos/ } }],
    ['ours, another scheduler\'s flag (ipvsadm: incompatible)', { [OURS]: 'mh', [OURS_FLAGS]: 'sh-port' }, { problem: { annotation: OURS_FLAGS, value: 'sh-port', problem: /"sh-port" is not a flag of scheduler mh; use flag-1, flag-2, flag-3, mh-fallback, mh-port/ } }],
    ['ours, flags without a scheduler', { [OURS_FLAGS]: 'mh-port' }, { problem: { annotation: OURS_FLAGS, problem: /has no effect without ipvs.kube-proxy-ipvs.io\/scheduler/ } }],
    ['kube-router\'s, mh with flag-1,flag-2 (spaces trimmed)', { [KR]: 'mh', [KR_FLAGS]: 'flag-1, flag-2' }, { scheduling: { scheduler: 'mh', flags: { sched1: true, sched2: true }, annotation: KR } }],
    ['kube-router\'s, mh without flags: none (kube-router sets none)', { [KR]: 'mh' }, { scheduling: { scheduler: 'mh', flags: {}, annotation: KR } }],
    ['kube-router\'s, lc', { [KR]: 'lc' }, { scheduling: { scheduler: 'lc', flags: {}, annotation: KR } }],
    ['kube-router\'s, a value it does not take', { [KR]: 'wrr' }, { problem: { annotation: KR, value: 'wrr', problem: /is not one kube-router takes \(rr, lc, dh, sh, mh\)/ } }],
    ['kube-router\'s, case matters as there', { [KR]: 'MH' }, { problem: { annotation: KR, value: 'MH' } }],
    ['kube-router\'s flags on sh: ignored, as kube-router does, and said', { [KR]: 'sh', [KR_FLAGS]: 'flag-1' }, { scheduling: { scheduler: 'sh', flags: {}, annotation: KR }, problem: { annotation: KR_FLAGS, problem: /applies it to scheduler mh only/ } }],
    ['kube-router\'s unknown flag words: ignored, the others applied', { [KR]: 'mh', [KR_FLAGS]: 'flag-2,mh-fallback' }, { scheduling: { scheduler: 'mh', flags: { sched2: true } }, problem: { annotation: KR_FLAGS, problem: /ignores "mh-fallback"/ } }],
    ['ours wins over kube-router\'s', { [OURS]: 'wlc', [KR]: 'mh' }, { scheduling: { scheduler: 'wlc', annotation: OURS } }],
  ];
  for (const [name, annotations, want] of cases) t.match(annotatedScheduling(annotations), want, name);
  t.same(annotatedScheduling({ [OURS]: 'mh' }).problem, undefined, 'nothing reported when all is applied');
  t.same(schedulingAnnotationsOf({ [OURS]: 'sh', 'kubectl.kubernetes.io/last-applied-configuration': '{}', [KR_FLAGS]: null as unknown as string }), { [OURS]: 'sh', [KR_FLAGS]: 'null' }, 'only the scheduler annotations are kept; a value that is not a string is kept as text (and refused)');
  t.same(flagNames('mh', { sched1: true, sched2: true }), ['mh-fallback', 'mh-port']);
  t.same(flagNames('sh', { sched2: true }), ['sh-port']);
  t.same(flagNames('rr', { sched1: true }), ['flag-1']);
});

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'] };
const http = [{ name: 'http', protocol: 'TCP' as const, port: 8080 }];

function web(annotations?: Record<string, string>, name = 'web', ip = '10.96.0.10', nodePort = 30080): Service {
  const svc = service(name, { type: 'NodePort', clusterIP: ip, ports: [{ name: 'http', port: 80, nodePort }] });
  if (annotations) svc.metadata.annotations = annotations;
  return svc;
}
const webSlice = (name = 'web') => slice(name, [endpoint('10.244.1.5', { node: 'node-a' }), endpoint('10.244.2.6', { node: 'node-b' })], http);

function schedulers(services: Service[], config = defaultProxyConfig()) {
  const desired = desiredState({ services, endpointSlices: services.map((s) => webSlice(s.metadata.name)) }, node, config);
  return planOutput(desired).virtualServers.map((vs) => [`${vs.address}:${vs.port}`, vs.scheduler, ...(vs.flags ? [vs.flags.join(',')] : [])]);
}

t.test('every virtual server of an annotated Service gets its scheduler and flags; the others the global one', async (t) => {
  t.same(
    schedulers([web({ [OURS]: 'mh', [OURS_FLAGS]: 'mh-fallback,mh-port' }), web(undefined, 'other', '10.96.0.11', 30081)]),
    [
      ['10.96.0.10:80', 'mh', 'mh-fallback,mh-port'],
      ['10.96.0.11:80', 'rr'],
      ['192.168.1.10:30080', 'mh', 'mh-fallback,mh-port'],
      ['192.168.1.10:30081', 'rr'],
    ],
  );
  t.same(schedulers([web({ [OURS]: 'mh' })]).map((r) => r.slice(1)), [['mh', 'mh-port'], ['mh', 'mh-port']], 'mh without flags: mh-port, as kube-proxy sets for --ipvs-scheduler=mh');
  t.same(schedulers([web({ [OURS]: 'mh', [OURS_FLAGS]: '' })]).map((r) => r.slice(1)), [['mh'], ['mh']], 'flags given empty: none');
  t.same(schedulers([web({ [KR]: 'mh', [KR_FLAGS]: 'flag-1' })]).map((r) => r.slice(1)), [['mh', 'mh-fallback'], ['mh', 'mh-fallback']], 'kube-router\'s flag-1 on mh is mh-fallback');
  t.same(schedulers([web({ [OURS]: 'sh', [OURS_FLAGS]: 'sh-fallback,sh-port' })]).map((r) => r.slice(1)), [['sh', 'sh-fallback,sh-port'], ['sh', 'sh-fallback,sh-port']]);
  t.same(schedulers([web({ [OURS]: 'bogus' })], defaultProxyConfig({ scheduler: 'wlc' })).map((r) => r.slice(1)), [['wlc'], ['wlc']], 'an invalid annotation: the global scheduler');
  t.same(schedulers([web()], defaultProxyConfig({ scheduler: 'mh' })).map((r) => r.slice(1)), [['mh', 'mh-port'], ['mh', 'mh-port']], 'the global mh, as before');
});

function programmed(t: Test, services: Service[]) {
  const state = new KnownObjects(node, defaultProxyConfig());
  for (const s of services) {
    state.upsertService(s);
    state.upsertEndpointSlice(webSlice(s.metadata.name));
  }
  const mirror = new Mirror();
  mirror.record(plan(state.desired, mirror));
  t.same(plan(state.desired, mirror), [], 'programmed');
  return { state, mirror };
}

function ipvsOps(ops: Operation[]): BatchOp[] {
  return ops.flatMap((o) => (o.kind === 'ipvs' ? [o.batch] : []));
}

/** "op address:port scheduler" of an operation on an address-keyed virtual server. */
function line(b: BatchOp): string {
  const s = b.service as { address: string; port: number; scheduler?: string };
  return `${b.op} ${s.address}:${s.port} ${s.scheduler}`;
}

t.test('an annotation added, changed or removed is planned as updateService in place: no delete, no re-add, real servers untouched', async (t) => {
  const { state, mirror } = programmed(t, [web(), web(undefined, 'other', '10.96.0.11', 30081)]);
  const update = (scheduler: string, flags?: Record<string, boolean>) =>
    ['10.96.0.10', '192.168.1.10'].map((address) => ({
      op: 'updateService',
      service: { protocol: 'tcp', address, port: address === '10.96.0.10' ? 80 : 30080, scheduler, ...(flags ? { flags } : {}) },
    }));

  let ops = plan(state.desired, mirror, { scope: state.upsertService(web({ [OURS]: 'mh', [OURS_FLAGS]: 'mh-fallback' })) });
  t.strictSame(ipvsOps(ops), update('mh', { sched1: true }), 'rr → mh with mh-fallback: two updates, one per virtual server of the Service');
  t.same(ops.filter((o) => o.kind !== 'ipvs'), [], 'nothing else: sets, addresses and rules do not depend on the scheduler');
  mirror.record(ops);

  ops = plan(state.desired, mirror, { scope: state.upsertService(web({ [KR]: 'mh', [KR_FLAGS]: 'flag-1,flag-2' })) });
  t.strictSame(ipvsOps(ops), update('mh', { sched1: true, sched2: true }), 'flags changed: updates');
  mirror.record(ops);
  t.strictSame(plan(state.desired, mirror, { scope: state.upsertService(web({ [OURS]: 'mh', [OURS_FLAGS]: 'mh-port,mh-fallback' })) }), [], 'the same scheduling spelt the other way: nothing to do');

  ops = plan(state.desired, mirror, { scope: state.upsertService(web()) });
  t.strictSame(ipvsOps(ops), update('rr'), 'annotation removed: back to the global scheduler, in place');
  mirror.record(ops);
  t.same(plan(state.desired, mirror), [], 'a full plan agrees');
});

t.test('adopted from the kernel: a virtual server whose scheduler or flags differ is updated, the others left alone', async (t) => {
  const state = new KnownObjects(node, defaultProxyConfig());
  state.upsertService(web({ [OURS]: 'sh', [OURS_FLAGS]: 'sh-port' }));
  state.upsertEndpointSlice(webSlice());
  const dests = [{ address: '10.244.1.5', port: 8080, weight: 1 }, { address: '10.244.2.6', port: 8080, weight: 1 }];
  const mirror = Mirror.fromKernel({
    virtualServers: [
      { protocol: 'tcp', address: '10.96.0.10', port: 80, scheduler: 'sh', flags: { sched1: false, sched2: true, sched3: false, onePacket: false }, destinations: dests },
      { protocol: 'tcp', address: '192.168.1.10', port: 30080, scheduler: 'rr', flags: { sched1: false, sched2: false, sched3: false, onePacket: false }, destinations: dests },
    ],
    ipsets: [],
    boundAddresses: [],
  });
  t.strictSame(ipvsOps(plan(state.desired, mirror)), [{ op: 'updateService', service: { protocol: 'tcp', address: '192.168.1.10', port: 30080, scheduler: 'sh', flags: { sched2: true } } }]);
});

t.test('invalid annotations: reported once per change, the Service on the global scheduler', async (t) => {
  const state = new KnownObjects(node, defaultProxyConfig({ scheduler: 'wrr' }));
  state.upsertService(web({ [OURS]: 'mh2' }));
  state.upsertEndpointSlice(webSlice());
  const [report, ...more] = state.takeSchedulingReports();
  t.same(more, []);
  t.match(report, { service: 'default/web', annotation: OURS, value: 'mh2', reason: 'invalid-annotation', scheduler: 'wrr', flags: [] });
  t.match(describeReport(report), /^Service default\/web: ipvs.kube-proxy-ipvs.io\/scheduler="mh2" is not an IPVS scheduler; use one of .*; its virtual servers use scheduler wrr$/);
  t.same([...state.desired.virtualServers.values()].map((vs) => vs.service.scheduler), ['wrr', 'wrr']);
  state.upsertService(web({ [OURS]: 'mh2' }));
  t.same(state.takeSchedulingReports(), [], 'the same Service again: not reported again');
  state.upsertService(web({ [KR]: 'mh', [KR_FLAGS]: 'flag-9' }));
  t.match(state.takeSchedulingReports(), [{ annotation: KR_FLAGS, scheduler: 'mh' }], 'a different problem: reported');
  state.upsertService(web({ [KR]: 'mh' }));
  t.same(state.takeSchedulingReports(), [], 'fixed: nothing to report');
  state.upsertService(web({ [KR]: 'mh', [KR_FLAGS]: 'flag-9' }));
  t.equal(state.takeSchedulingReports().length, 1, 'broken again: reported again');
  const { schedulingReports } = plannedState({ services: [web({ [OURS]: 'x' })], endpointSlices: [] }, node, defaultProxyConfig());
  t.equal(schedulingReports.length, 1, 'plan gets the same reports');
});

t.test('a scheduler the kernel has not got: its Services move to the global one (updated in place or added with it), reported each', async (t) => {
  const { state, mirror } = programmed(t, [web({ [OURS]: 'lc' }), web({ [KR]: 'lc' }, 'other', '10.96.0.11', 30081), web(undefined, 'third', '10.96.0.12', 30082)]);
  state.takeSchedulingReports();
  // A Service added with a scheduler the kernel then refuses: nothing of it was programmed.
  state.upsertService(web({ [OURS]: 'twos' }, 'fresh', '10.96.0.13', 30083));
  state.upsertEndpointSlice(webSlice('fresh'));
  const refused = plan(state.desired, mirror, { scope: state.upsertService(web({ [OURS]: 'twos' }, 'fresh', '10.96.0.13', 30083)) });
  t.ok(ipvsOps(refused).map(line).includes('addService 10.96.0.13:80 twos'), 'first planned with twos');
  const scope = state.schedulerMissing('twos');
  t.same([...scope.virtualServers].sort(), ['tcp/10.96.0.13/80', 'tcp/192.168.1.10/30083'], 'only its virtual servers are looked at again');
  const again = ipvsOps(plan(state.desired, mirror, { scope }));
  t.same(again.filter((b) => b.op === 'addService').map(line), ['addService 10.96.0.13:80 rr', 'addService 192.168.1.10:30083 rr'], 'added with the global scheduler');
  t.match(state.takeSchedulingReports(), [{ service: 'default/fresh', reason: 'module-missing', value: 'twos', scheduler: 'rr', problem: /no module ip_vs_twos/ }]);

  // Programmed with lc, and then lc is found missing: updated in place.
  const lc = state.schedulerMissing('lc');
  const ops = ipvsOps(plan(state.desired, mirror, { scope: lc }));
  t.same(ops.map(line).sort(), [
    'updateService 10.96.0.10:80 rr',
    'updateService 10.96.0.11:80 rr',
    'updateService 192.168.1.10:30080 rr',
    'updateService 192.168.1.10:30081 rr',
  ]);
  t.same(state.takeSchedulingReports().map((r) => `${r.service} ${r.annotation} ${r.reason}`).sort(), [`default/other ${KR} module-missing`, `default/web ${OURS} module-missing`]);
  t.same(state.schedulerMissing('lc').virtualServers.size, 0, 'marked once');
  t.same(state.schedulerMissing('rr').virtualServers.size, 0, 'the global scheduler is never marked');
});

t.test('SchedulerModules learns a missing module from the kernel\'s ENOENT on an annotated scheduler only', async (t) => {
  const warnings: string[] = [];
  const modules = new SchedulerModules('rr', { warn: (_o: unknown, msg?: string) => void warnings.push(msg ?? '') } as never);
  const enoent = new NetlinkError({ errno: 2, code: 'ENOENT', operation: 'addService' });
  const service = (scheduler: string) => ({ protocol: 'tcp' as const, address: '10.96.0.13', port: 80, scheduler });
  const found = modules.learn({
    applied: [],
    failed: [
      { op: { kind: 'ipvs', batch: { op: 'addService', service: service('twos') } }, error: enoent },
      { op: { kind: 'ipvs', batch: { op: 'updateService', service: service('twos') } }, error: enoent },
      { op: { kind: 'ipvs', batch: { op: 'addService', service: service('rr') } }, error: enoent },
      { op: { kind: 'ipvs', batch: { op: 'addService', service: service('lc') } }, error: new NetlinkError({ errno: 17, code: 'EEXIST', operation: 'addService' }) },
      { op: { kind: 'ipvs', batch: { op: 'addDestination', service: service('sed'), destination: { address: '10.244.1.5', port: 8080 } } }, error: enoent },
    ],
  });
  t.same(found, ['twos'], 'twos, once; not the global rr, not another error, not a destination');
  t.match(warnings, [/the kernel has no IPVS scheduler twos: Services annotated with it use the global scheduler rr/]);
  t.same(modules.learn({ applied: [], failed: [{ op: { kind: 'ipvs', batch: { op: 'addService', service: service('twos') } }, error: enoent }] }), [], 'already known');
  modules.report([{ service: 'default/web', annotation: OURS, value: 'x', reason: 'invalid-annotation', problem: 'is bad', scheduler: 'rr', flags: [] }]);
  t.same(modules.counts, { 'invalid-annotation': 1, 'module-missing': 0 });
});

t.test('exported as kubeproxy_ipvs_scheduler_annotation_problems_total{reason}', async (t) => {
  const metrics = new ProxyMetrics(() => idleCounters({ schedulerAnnotationProblems: { 'invalid-annotation': 2, 'module-missing': 1 } }), { defaultMetrics: false });
  const text = await metrics.registry.metrics();
  t.match(text, /^kubeproxy_ipvs_scheduler_annotation_problems_total\{reason="invalid-annotation"\} 2$/m);
  t.match(text, /^kubeproxy_ipvs_scheduler_annotation_problems_total\{reason="module-missing"\} 1$/m);
});
