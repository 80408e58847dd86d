/**
 * The IPVS codec without a socket, through the same path the client uses:
 * requests written by RequestWriter (validation included) and encoded by
 * the addon; kernel messages decoded into reply records and read into the
 * public shapes.
 */
import { native } from '../../lib/netlink/binding.js';
import { CMD } from '../../lib/ipvs/constants.js';
import { FLAG } from '../../lib/ipvs/records.js';
import { ReplyRecords, type RequestReplies } from '../../lib/ipvs/reply-reader.js';
import { RequestWriter } from '../../lib/ipvs/request-writer.js';

/** Writes one request into a writer; `cmd` says which. */
export interface Op {
  cmd: number;
  write(w: RequestWriter): void;
}

export const serviceOp = (cmd: number, spec: object): Op => ({ cmd, write: (w) => void (w.begin(cmd), w.serviceSpec(spec, 'service')) });

export const keyOp = (cmd: number, key: object | undefined, flags = 0): Op => ({
  cmd,
  write: (w) => {
    w.begin(cmd, flags);
    if (key) w.serviceKeyOnly(key, 'service');
  },
});

export const destOp = (cmd: number, service: object, d: object, keyOnly = cmd === CMD.DEL_DEST): Op => ({
  cmd,
  write: (w) => {
    w.begin(cmd);
    const af = w.serviceKeyOnly(service, 'service');
    if (keyOnly) w.destinationKey(d, 'destination');
    else w.destinationSpec(d, af, 'destination');
  },
});

export const dumpOp = (cmd: number, key?: object): Op => keyOp(cmd, key, FLAG.dump);

/** The message the client would send for `op` (family id as given), as sent alone. */
export function encode(op: Op, familyId: number): Buffer {
  const w = new RequestWriter();
  op.write(w);
  return native.ipvsEncode(w.records(), w.count, w.strings(), familyId)[0];
}

/** One kernel message, read into the public shapes. */
export function decode(msg: Buffer, defaultAf = 2): RequestReplies & { cmd: number } {
  const r = native.ipvsDecode(msg, defaultAf);
  return { cmd: r.cmd, ...new ReplyRecords(r.records, r.strings).byRequest(1)[0] };
}
