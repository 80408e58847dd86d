/**
 * The labels of kubernetes_build_info, the gauge at 1 that kube-proxy
 * registers through component-base (metrics/prometheus/version) from its
 * version.Info, and that version panels read.
 *
 * The version is the Kubernetes release this proxy mirrors, the one
 * `--version` prints. Node.js stands in for Go: go_version is Node's
 * version, compiler is "node". git_commit, git_tree_state and build_date
 * are what a Kubernetes build without stamped version information reports
 * (empty, empty, the epoch): this proxy is not built from Kubernetes'
 * tree, so it has none to give.
 */

/** The Kubernetes release this proxy mirrors: the one place it is written. */
export const KUBERNETES_VERSION = 'v1.37.0';

export const BUILD_INFO_LABELS = ['major', 'minor', 'git_version', 'git_commit', 'git_tree_state', 'build_date', 'go_version', 'compiler', 'platform'] as const;

export type BuildInfo = Record<(typeof BUILD_INFO_LABELS)[number], string>;

export function buildInfo(gitVersion: string): BuildInfo {
  const [, major = '', minor = ''] = /^v(\d+)\.(\d+)/.exec(gitVersion) ?? [];
  return {
    major,
    minor,
    git_version: gitVersion,
    git_commit: '',
    git_tree_state: '',
    build_date: '1970-01-01T00:00:00Z',
    go_version: process.version,
    compiler: 'node',
    // Go's GOOS/GOARCH names, as --version=raw gives them.
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
