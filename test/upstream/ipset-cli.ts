/**
 * The `ipset` command line, done with the library: what the yardstick
 * (ipset-yardstick.ts) runs for each of the ipset project's test commands.
 * It maps the tool's syntax onto the API and decides nothing the library
 * could: elements and their options go to the library as the text the tool
 * was given, create options as the API's options (unknown ones too, so the
 * library refuses them); only the tool's command and option spellings
 * (prefixes, aliases, legacy type names, `--from`/`--to`) are resolved here.
 */
import type { CreateOptions, Ipset, SetHeader, SetType } from '../../lib/ipset/index.js';

/** Shell words of a command (quotes and backslashes resolved), stopping at a shell operator. */
export function words(line: string): { words: string[]; rest: string } {
  const out: string[] = [];
  let i = 0;
  let cur: string | undefined;
  const end = () => {
    if (cur !== undefined) out.push(cur);
    cur = undefined;
  };
  while (i < line.length) {
    const c = line[i];
    if (c === ' ' || c === '\t') {
      end();
      i++;
    } else if ('|&;<>`'.includes(c) || (c === '2' && cur === undefined && line[i + 1] === '>')) {
      break;
    } else if (c === '"' || c === "'") {
      const close = line.indexOf(c, i + 1);
      cur = (cur ?? '') + line.slice(i + 1, close < 0 ? line.length : close);
      i = close < 0 ? line.length : close + 1;
    } else if (c === '\\' && i + 1 < line.length) {
      cur = (cur ?? '') + line[i + 1];
      i += 2;
    } else {
      cur = (cur ?? '') + c;
      i++;
    }
  }
  end();
  return { words: out, rest: line.slice(i).trim() };
}

const COMMANDS: Array<[string, string[]]> = [
  ['create', ['create', 'new', '-N']],
  ['add', ['add', '-A']],
  ['del', ['del', '-D']],
  ['test', ['test', '-T']],
  ['destroy', ['destroy', 'x', '-X']],
  ['list', ['list', '-L']],
  ['save', ['save', '-S']],
  ['restore', ['restore', '-R']],
  ['flush', ['flush', '-F']],
  ['rename', ['rename', 'e', '-E']],
  ['swap', ['swap', 'w', '-W']],
  ['help', ['help', '-h', '-H']],
  ['version', ['version', '-v', '-V']],
];
const ENV_FLAGS: Record<string, string> = { '-!': 'exist', '-exist': 'exist', '-q': 'quiet', '-quiet': 'quiet', '-s': 'sorted', '-sorted': 'sorted', '-r': 'resolve', '-resolve': 'resolve', '-n': 'name', '-name': 'name', '-t': 'terse', '-terse': 'terse' };
const ENV_ARGS: Record<string, string> = { '-o': 'output', '-output': 'output', '-f': 'file', '-file': 'file' };

/** The tool's set type names, legacy ones included (each type's `alias`). */
const TYPE_ALIASES: Record<string, SetType> = {
  iphash: 'hash:ip', ipporthash: 'hash:ip,port', ipportiphash: 'hash:ip,port,ip', ipportnethash: 'hash:ip,port,net',
  ipmarkhash: 'hash:ip,mark', ipmachash: 'hash:ip,mac', machash: 'hash:mac', nethash: 'hash:net', netporthash: 'hash:net,port',
  netifacehash: 'hash:net,iface', netnethash: 'hash:net,net', netportnethash: 'hash:net,port,net', ipmap: 'bitmap:ip',
  macipmap: 'bitmap:ip,mac', portmap: 'bitmap:port', setlist: 'list:set',
};

/** A command line, parsed as the tool parses it. */
export interface Parsed {
  cmd: string;
  args: string[];
  env: Record<string, string | true>;
}

export function parse(argv: string[]): Parsed | { error: string } {
  const env: Record<string, string | true> = {};
  const rest: string[] = [];
  let cmd: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const bare = a.startsWith('--') ? a.slice(1) : a;
    if (ENV_FLAGS[bare]) env[ENV_FLAGS[bare]] = true;
    else if (ENV_ARGS[bare]) env[ENV_ARGS[bare]] = argv[++i] ?? '';
    else if (cmd === undefined) {
      const word = a.startsWith('--') ? a.slice(2) : a;
      cmd = COMMANDS.find(([, names]) => word.length > 0 && names.some((n) => n.startsWith(word)))?.[0];
      if (!cmd) return { error: `unknown command ${a}` };
    } else rest.push(a);
  }
  if (!cmd) return { error: 'no command' };
  return { cmd, args: rest, env };
}

const CREATE_WORDS: Record<string, [keyof CreateOptions | 'ignored', 'number' | 'string' | 'flag']> = {
  family: ['family', 'string'], hashsize: ['hashSize', 'number'], maxelem: ['maxElem', 'number'], timeout: ['timeout', 'number'],
  counters: ['counters', 'flag'], comment: ['comment', 'flag'], skbinfo: ['skbinfo', 'flag'], forceadd: ['forceadd', 'flag'],
  range: ['range', 'string'], size: ['size', 'number'], netmask: ['netmask', 'number'], bitmask: ['bitmask', 'string'],
  markmask: ['markmask', 'number'], bucketsize: ['bucketSize', 'number'], initval: ['initval', 'number'],
  probes: ['ignored', 'string'], resize: ['ignored', 'string'], gc: ['ignored', 'string'],
};

/** A number as the tool reads one (strtoull, base 0); NaN stays for the library to refuse. */
function num(s: string): number {
  return /^0[0-7]+$/.test(s) ? Number.parseInt(s, 8) : Number(s);
}

/** `create NAME TYPE OPTIONS...` as create()'s arguments. */
export function createArgs(args: string[]): { name: string; type: SetType; options: CreateOptions } {
  const [name, typeWord, ...opts] = args;
  const type = (TYPE_ALIASES[typeWord] ?? typeWord) as SetType;
  const options: Record<string, unknown> = {};
  let from: string | undefined, to: string | undefined, network: string | undefined;
  for (let i = 0; i < opts.length; i++) {
    const w = opts[i].replace(/^--?/, '');
    if (w === '4' || w === 'inet') options.family = 'inet';
    else if (w === '6' || w === 'inet6') options.family = 'inet6';
    else if (w === 'from') from = opts[++i];
    else if (w === 'to') to = opts[++i];
    else if (w === 'network') network = opts[++i];
    else if (CREATE_WORDS[w]) {
      const [key, kind] = CREATE_WORDS[w];
      const v = kind === 'flag' ? true : opts[++i];
      if (key !== 'ignored') options[key] = kind === 'number' ? num(String(v)) : v;
    } else options[w] = true; // the library refuses what it does not take
  }
  // bitmap ranges the old way; hash types ignore from, to and network.
  if (type.startsWith('bitmap:') && from !== undefined) options.range = `${from}-${to ?? ''}`;
  if (type.startsWith('bitmap:') && network !== undefined) options.range = network;
  return { name, type, options: options as CreateOptions };
}

/** An element and its options as the text the library takes ("1.2.3.4 timeout 5 comment \"x\""). */
export function entryOf(args: string[]): string {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    out.push(args[i]);
    if (args[i] === 'comment' && i + 1 < args.length) out.push(`"${args[++i]}"`);
  }
  return out.join(' ');
}

/** What running a command gave: the exit status the tool would have, and what a listing read. */
export interface Outcome {
  code: 0 | 1;
  error?: string;
  /** list/save: the sets read, by name. */
  listed?: Map<string, SetHeader & { entries?: string[] }>;
}

/** Runs one parsed command with the library. `stdin` is restore's input. */
export async function execute(ipset: Ipset, p: Parsed, stdin?: string): Promise<Outcome> {
  const exist = p.env.exist === true;
  const a = p.args;
  try {
    switch (p.cmd) {
      case 'create': {
        const { name, type, options } = createArgs(a);
        await ipset.create(name, type, exist ? { ...options, exist } : options);
        return { code: 0 };
      }
      case 'add':
        await ipset.add(a[0], entryOf(a.slice(1)), exist ? { exist } : {});
        return { code: 0 };
      case 'del':
        await ipset.del(a[0], entryOf(a.slice(1)), exist ? { exist } : {});
        return { code: 0 };
      case 'test':
        return { code: (await ipset.test(a[0], entryOf(a.slice(1)))) ? 0 : 1 };
      case 'destroy':
        await ipset.destroy(a[0]);
        return { code: 0 };
      case 'flush':
        await ipset.flush(a[0]);
        return { code: 0 };
      case 'rename':
        await ipset.rename(a[0], a[1]);
        return { code: 0 };
      case 'swap':
        await ipset.swap(a[0], a[1]);
        return { code: 0 };
      case 'list':
      case 'save': {
        const names = a[0] !== undefined ? [a[0]] : await ipset.listNames();
        const listed = new Map<string, SetHeader & { entries?: string[] }>();
        for (const n of names) listed.set(n, p.env.name ? ({ name: n } as SetHeader) : p.env.terse ? await ipset.header(n) : await ipset.list(n));
        return { code: 0, listed };
      }
      case 'restore':
        return restore(ipset, stdin ?? '', exist);
      default:
        return { code: 1, error: `${p.cmd} is not a library operation` };
    }
  } catch (err) {
    return { code: 1, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}

/**
 * `ipset restore`: its lines are commands without "ipset", run in order
 * until one fails, as the tool does (the kernel stops at the first refused
 * element of the tool's batched adds; addMany() would go on with the rest).
 */
async function restore(ipset: Ipset, text: string, exist: boolean): Promise<Outcome> {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#') && l !== 'COMMIT');
  for (const line of lines) {
    const p = parse(restoreWords(line));
    if ('error' in p) return { code: 1, error: p.error };
    if (exist) p.env.exist = true;
    const r = await execute(ipset, p);
    if (r.code !== 0) return r;
  }
  return { code: 0 };
}

/** A restore line's words as the tool splits them: a double quote toggles quoting, nothing escapes. */
export function restoreWords(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ' ' || c === '\t')) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

/** A set as `ipset save` writes it: its create line from the header, then its elements. */
export function saveText(name: string, s: SetHeader & { entries?: string[] }): string {
  const w: string[] = [`create ${name} ${s.type}`];
  if (s.range !== undefined) w.push(`range ${s.range}`);
  if (s.family && s.type.startsWith('hash:')) w.push(`family ${s.family}`);
  const numbers: Array<[keyof SetHeader, string]> = [['hashSize', 'hashsize'], ['maxElem', 'maxelem'], ['netmask', 'netmask'], ['markmask', 'markmask'], ['timeout', 'timeout'], ['size', 'size'], ['bucketSize', 'bucketsize'], ['initval', 'initval']];
  for (const [key, word] of numbers) if (s[key] !== undefined) w.push(`${word} ${s[key]}`);
  if (s.bitmask !== undefined) w.push(`bitmask ${s.bitmask}`);
  for (const flag of ['counters', 'comment', 'skbinfo', 'forceadd'] as const) if (s[flag]) w.push(flag);
  return [w.join(' '), ...(s.entries ?? []).map((e) => `add ${name} ${e}`)].join('\n') + '\n';
}
