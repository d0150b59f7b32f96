/**
 * Whether a host name or address only ever accepts connections from this machine: `localhost`,
 * 127.0.0.0/8, `::1` in any spelling, and IPv4-mapped 127.x. The API server, the operations server
 * and the command line's `--insecure` check all decide with this one function.
 *
 * @module
 */
import { isIP } from 'node:net';

/** Whether `host` (optionally in brackets, as in a URL) only ever accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1' || /^(0{0,4}:){7}0{0,3}1$/.test(bare) || /^::ffff:127\./i.test(bare);
}
