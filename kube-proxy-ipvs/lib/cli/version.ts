/**
 * What `--version` prints, as kube-proxy's (component-base verflag):
 * `--version` (or `=true`) prints "Kubernetes v1.x.y" and exits 0, where
 * v1.x.y is the kube-proxy release whose flags, configuration, metrics and
 * health bodies this one mirrors; `--version=raw` prints the details as Go's
 * %#v of version.Info would, with this package's own version and the
 * Node.js it runs on added; `--version=false` does nothing. Upstream's
 * `--version=vX.Y.Z` (report another patch level) is taken when it names
 * the same major, minor and patch.
 */
import { readFileSync } from 'node:fs';

import { KUBERNETES_VERSION } from '../proxy/build-info.js';

export { KUBERNETES_VERSION };

/** This package's version, from its package.json (found from here in the sources and in dist/ alike). */
export function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'kube-proxy-ipvs' && pkg.version) return pkg.version;
    } catch {
      // not this one
    }
  }
  throw new Error('kube-proxy-ipvs: cannot find its package.json');
}

const semver = /^v(\d+)\.(\d+)\.(\d+)([-+].*)?$/;

/**
 * What the --version flag's value asks for: the text to print and exit with,
 * or undefined to run on. Throws for a value upstream refuses.
 */
export function versionOutput(value: string | boolean | undefined): string | undefined {
  if (value === undefined || value === false || value === 'false') return undefined;
  if (value === true || value === 'true') return `Kubernetes ${KUBERNETES_VERSION}`;
  if (value === 'raw') return rawVersion();
  const v = semver.exec(value);
  if (v) {
    const ours = semver.exec(KUBERNETES_VERSION)!;
    if (v[1] !== ours[1] || v[2] !== ours[2] || v[3] !== ours[3]) {
      throw new Error(`--version=${value}: must match the major, minor and patch of ${KUBERNETES_VERSION}`);
    }
    return undefined;
  }
  throw new Error(`--version: invalid value "${value}" (true, false, raw or vX.Y.Z)`);
}

function rawVersion(): string {
  const [, major, minor] = semver.exec(KUBERNETES_VERSION)!;
  const fields: Array<[string, string]> = [
    ['Major', major!],
    ['Minor', minor!],
    ['GitVersion', KUBERNETES_VERSION],
    ['Platform', `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`],
    ['Implementation', 'kube-proxy-ipvs'],
    ['ImplementationVersion', packageVersion()],
    ['NodeVersion', process.version],
  ];
  return `version.Info{${fields.map(([k, v]) => `${k}:${JSON.stringify(v)}`).join(', ')}}`;
}
