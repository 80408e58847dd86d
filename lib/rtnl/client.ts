/**
 * Rtnl: the links and addresses the proxy needs from rtnetlink — a dummy
 * interface (kube-ipvs0) and the addresses bound to it — without running
 * `ip`. Same socket core and error model as Ipvs.
 */
import { constants } from 'node:os';

import { type NativeResult, type NativeRtnlHandle, native } from '../netlink/binding.js';
import { NetlinkClient, type OpenOptions, openHandle } from '../netlink/client.js';
import { NetlinkError } from '../netlink/errors.js';
import { checkInteger, parseAddress } from '../util/address.js';
import type { InterfaceAddress, Link } from './types.js';

const IFNAMSIZ = 16;
const IFA_F_NODAD = 0x02; // <linux/if_addr.h>: skip duplicate address detection

type Reply = NativeResult & { link?: Link; addresses?: InterfaceAddress[] };

export type AddressResult = { address: string; ok: true } | { address: string; ok: false; error: NetlinkError };

function checkLinkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('link name must be a non-empty string');
  if (name.length > IFNAMSIZ - 1) throw new RangeError(`link name must be at most ${IFNAMSIZ - 1} characters, got '${name}'`);
  if (/[\s/:]/.test(name) || name === '.' || name === '..') throw new TypeError(`link name '${name}' is not a valid interface name`);
  return name;
}

/** "10.96.0.10" (host prefix) or "10.96.0.0/24". */
function parseCidr(value: unknown, field: string): { family: 'inet' | 'inet6'; address: string; prefixLength: number } {
  if (typeof value !== 'string') throw new TypeError(`${field} must be an address string`);
  const [addr, len, ...rest] = value.split('/');
  if (rest.length) throw new TypeError(`${field} has more than one '/': '${value}'`);
  const a = parseAddress(addr, field);
  const max = a.family === 'inet' ? 32 : 128;
  if (len !== undefined && !/^\d+$/.test(len)) throw new TypeError(`${field} prefix length must be a number, got '${len}'`);
  const prefixLength = len === undefined ? max : checkInteger(Number(len), `${field} prefix length`, 1, max);
  return { family: a.family, address: a.text, prefixLength };
}

export class Rtnl extends NetlinkClient<NativeRtnlHandle> {
  private constructor(handle: NativeRtnlHandle) {
    super(handle, 'Rtnl');
  }

  static async open(options: OpenOptions = {}): Promise<Rtnl> {
    return new Rtnl(await openHandle((o) => new native.RtnlHandle(o), options, 'Rtnl.open'));
  }

  private run(ops: object[], operation: string): Promise<Reply[]> {
    return this.exclusive(operation, () => this.native(operation, undefined, () => this.handle.execute(ops) as Promise<Reply[]>));
  }

  async getLink(name: string): Promise<Link | undefined> {
    const [r] = await this.run([{ op: 'getLink', name: checkLinkName(name) }], 'getLink');
    if (r.code === 'ENODEV') return undefined;
    if (r.errno) throw errorOf(r, 'getLink', name);
    return r.link;
  }

  /** Creates a dummy link if there is none of that name, brings it up, and returns it. */
  async ensureDummyLink(name: string): Promise<Link> {
    checkLinkName(name);
    const [created, up, got] = await this.run(
      [
        { op: 'newLink', name, kind: 'dummy', up: true },
        { op: 'setLinkUp', name },
        { op: 'getLink', name },
      ],
      'ensureDummyLink',
    );
    if (created.errno && created.code !== 'EEXIST') throw errorOf(created, 'ensureDummyLink', name);
    if (up.errno) throw errorOf(up, 'ensureDummyLink', name);
    if (got.errno || !got.link) throw errorOf(got, 'ensureDummyLink', name);
    if (got.link.kind !== 'dummy') {
      const detail = `a link named ${name} exists and is a ${got.link.kind || 'physical'} link, not dummy`;
      throw new NetlinkError({ errno: constants.errno.EEXIST, code: 'EEXIST', operation: 'ensureDummyLink', subject: name, detail });
    }
    return got.link;
  }

  /** Deletes a link; a link that is not there is not an error. */
  async deleteLink(name: string): Promise<void> {
    const [r] = await this.run([{ op: 'delLink', name: checkLinkName(name) }], 'deleteLink');
    if (r.errno && r.code !== 'ENODEV') throw errorOf(r, 'deleteLink', name);
  }

  /** Every address, or those of one link. */
  async listAddresses(link?: string): Promise<InterfaceAddress[]> {
    const ops: object[] = [{ op: 'dumpAddresses' }];
    if (link !== undefined) ops.unshift({ op: 'getLink', name: checkLinkName(link) });
    const replies = await this.run(ops, 'listAddresses');
    let index: number | undefined;
    if (link !== undefined) {
      if (replies[0].errno) throw errorOf(replies[0], 'listAddresses', link);
      index = replies[0].link?.index;
    }
    const dump = replies[replies.length - 1];
    if (dump.errno) throw errorOf(dump, 'listAddresses', link);
    return (dump.addresses ?? [])
      .filter((a) => index === undefined || a.index === index)
      .map((a) => (link !== undefined ? { ...a, link } : a));
  }

  /**
   * Every address of every link in one rtnetlink dump (sent with the link
   * lookup in one batch), split into those on `link` and those on the other
   * links: kube-proxy's GetLocalAddresses(kube-ipvs0) and
   * GetAllLocalAddressesExcept(kube-ipvs0) at the cost of one dump, where a
   * dump per interface took it ~50 s with ~19,500 services (#138927).
   * `link` is undefined when there is no link of that name (then every
   * address is elsewhere).
   */
  async splitAddresses(link: string): Promise<{ link?: Link; on: InterfaceAddress[]; elsewhere: InterfaceAddress[] }> {
    const [got, dump] = await this.run([{ op: 'getLink', name: checkLinkName(link) }, { op: 'dumpAddresses' }], 'splitAddresses');
    if (got.errno && got.code !== 'ENODEV') throw errorOf(got, 'splitAddresses', link);
    if (dump.errno) throw errorOf(dump, 'splitAddresses', link);
    const found = got.errno ? undefined : got.link;
    const on: InterfaceAddress[] = [];
    const elsewhere: InterfaceAddress[] = [];
    for (const a of dump.addresses ?? []) {
      if (found && a.index === found.index) on.push({ ...a, link });
      else elsewhere.push(a);
    }
    return { link: found, on, elsewhere };
  }

  /** Adds addresses ("10.96.0.10" means /32, "fd00::1" /128) to a link; one result each. */
  addAddresses(link: string, addresses: readonly string[]): Promise<AddressResult[]> {
    return this.changeAddresses('newAddress', link, addresses, 'addAddresses');
  }

  /** Removes addresses from a link; one result each. */
  deleteAddresses(link: string, addresses: readonly string[]): Promise<AddressResult[]> {
    return this.changeAddresses('delAddress', link, addresses, 'deleteAddresses');
  }

  private async changeAddresses(op: string, link: string, addresses: readonly string[], operation: string): Promise<AddressResult[]> {
    checkLinkName(link);
    if (!Array.isArray(addresses)) throw new TypeError('addresses must be an array');
    const parsed = addresses.map((a, i) => parseCidr(a, `addresses[${i}]`));
    if (parsed.length === 0) return [];
    const l = await this.getLink(link);
    if (!l) throw new NetlinkError({ errno: constants.errno.ENODEV, code: 'ENODEV', operation, subject: link, detail: `there is no link named ${link}` });
    const replies = await this.run(
      parsed.map((p) => ({ op, index: l.index, ...p, flags: p.family === 'inet6' ? IFA_F_NODAD : 0 })),
      operation,
    );
    return replies.map((r, i) =>
      r.errno ? { address: addresses[i], ok: false as const, error: errorOf(r, operation, addresses[i]) } : { address: addresses[i], ok: true as const },
    );
  }
}

function errorOf(r: NativeResult, operation: string, subject?: unknown): NetlinkError {
  return new NetlinkError({ errno: r.errno, code: r.code, operation, subject, kernelMessage: r.message, text: r.text });
}
