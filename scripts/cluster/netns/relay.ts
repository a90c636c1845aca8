/**
 * A TCP relay: listens on one address and port, passes every connection on to a target. A host
 * in a network namespace (./lab.ts) reaches a server that listens on 127.0.0.1 here (Redis,
 * PgBouncer) through one on the lab's gateway address.
 */
import { createConnection, createServer, type Socket } from 'node:net';

export interface Relay {
  host: string;
  port: number;
  close(): Promise<void>;
}

export function startRelay(listen: { host: string; port: number }, target: { host: string; port: number }): Promise<Relay> {
  const open = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = createConnection(target);
    for (const s of [inbound, outbound]) {
      open.add(s);
      s.setNoDelay(true);
      s.on('close', () => open.delete(s));
      // Either side failing ends both: the client sees its connection end, as it would without the relay.
      s.on('error', () => (s === inbound ? outbound : inbound).destroy());
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () =>
      resolve({
        host: listen.host,
        port: listen.port,
        close: () =>
          new Promise<void>((r) => {
            for (const s of open) s.destroy();
            server.close(() => r());
          }),
      }),
    );
  });
}
