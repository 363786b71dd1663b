// The bridge inside the sandbox between a command and drydock's egress proxy (egress.ts). The command has no
// network but a loopback of its own (bwrap --unshare-net: "Create a new network namespace", in which bwrap
// brings up the loopback device; bwrap(1)), and the proxy listens on a Unix socket outside, which the sandbox
// binds in at SANDBOX_EGRESS_SOCKET. Programs speak to proxies over TCP (HTTP_PROXY=http://host:port), so a
// small program of the daemon's own node (`node -e BRIDGE_SOURCE`) listens on a free port of that loopback
// and joins each connection to the socket. It runs as the command's uid, under its limits, and dies with the
// sandbox (its PID namespace ends with bwrap).
//
// LOUD: order matters. BRIDGE_WRAPPER starts the bridge in the background and reads the port it prints once it
// listens: the command never starts before the proxy can be reached (a `read`, never a sleep), and when the
// bridge cannot start the command does not run at all (exit 125, with the bridge's first line of error).

/** Where the proxy's socket appears inside the sandbox. */
export const SANDBOX_EGRESS_SOCKET = '/run/drydock/egress.sock';

/** Names that stay on the command's own loopback, never sent to the proxy (which would refuse them). */
export const NO_PROXY = 'localhost,127.0.0.1,::1';

/**
 * `node -e BRIDGE_SOURCE <socket>`: prints its port, then joins each connection on it to the socket. If the
 * socket cannot be reached, the client is told so in an HTTP answer rather than by a reset.
 */
export const BRIDGE_SOURCE = `'use strict';
const net = require('node:net');
const socket = process.argv[1];
process.stdout.on('error', () => {});
const down = 'HTTP/1.1 502 Bad Gateway\\r\\nContent-Type: text/plain\\r\\nConnection: close\\r\\n\\r\\n' +
  'drydock egress proxy: not reachable from the sandbox\\n';
const server = net.createServer({ allowHalfOpen: true }, (c) => {
  const u = net.connect(socket);
  let joined = false;
  u.once('connect', () => { joined = true; c.pipe(u); u.pipe(c); });
  u.on('error', () => { if (joined) c.destroy(); else c.end(down); });
  c.on('error', () => u.destroy());
});
server.on('error', (e) => { process.stdout.write('bridge: ' + e.code + '\\n'); process.exit(1); });
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

/**
 * `bash -c BRIDGE_WRAPPER drydock-egress <node> <source> <socket> <argv...>`: the bridge started, its port read
 * (10 s at most), the proxy variables set to it, then the command exec'd in bash's place. The bridge's error
 * output goes into the same pipe, so a bridge that fails to start is reported with its first line.
 */
export const BRIDGE_WRAPPER = `exec 3< <(exec "$1" -e "$2" "$3" 2>&1)
IFS= read -r -t 10 port <&3
case $port in
  ''|*[!0-9]*) echo "drydock: the bridge to the egress proxy did not start\${port:+: $port}" >&2; exit 125 ;;
esac
exec 3<&-
proxy="http://127.0.0.1:$port"
export HTTP_PROXY="$proxy" HTTPS_PROXY="$proxy" ALL_PROXY="$proxy" http_proxy="$proxy" https_proxy="$proxy" all_proxy="$proxy"
export NO_PROXY="${NO_PROXY}" no_proxy="${NO_PROXY}"
shift 3
exec "$@"`;

/** The argv prefix that runs `argv` behind the bridge, with `node` the daemon's own node. */
export function behindBridge(node: string, argv: readonly string[]): string[] {
  return [
    '/bin/bash',
    '-c',
    BRIDGE_WRAPPER,
    'drydock-egress',
    node,
    BRIDGE_SOURCE,
    SANDBOX_EGRESS_SOCKET,
    ...argv,
  ];
}
