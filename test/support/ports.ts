// A port nothing listens on: bound on 127.0.0.1 by the OS (port 0) and closed again. A server
// a test starts there later gets it; a client that connects first meets a real refusal.
// Shared by the unit, integration and e2e suites; imports only node:net.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
