// A TCP proxy in front of a real server (a PostgreSQL cluster) that can stop forwarding: while
// paused it accepts connections and reads what either side sends, and delivers none of it, as
// a database that stopped answering (a frozen host, a network partition) looks to its clients.
// Resumed, it delivers what it held, in order.
import * as net from 'node:net';

export interface TcpProxy {
  port: number;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let paused = false;
  const held: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket): void => {
    from.on('data', (chunk: Buffer) => {
      const send = (): void => void (to.destroyed || to.write(chunk));
      if (paused) held.push(send);
      else send();
    });
    from.on('end', () => (paused ? held.push(() => to.end()) : to.end()));
    from.on('error', () => to.destroy());
    from.on('close', () => to.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const send of held.splice(0)) send();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
