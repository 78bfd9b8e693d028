// The CONNECT proxy of `--compat` (docs/compat.md "Mailosaur"): `CONNECT <host>:443` for exactly
// the hosts of compat/hosts.ts is answered by this server itself, never tunnelled anywhere: the
// TLS is terminated here with a leaf certificate of the local CA (tls/localCa.ts), and the
// decrypted stream is handed to the same HTTP server (http/httpApi.ts), where the tunnel's target
// selects the emulated API. Any other target, or any other port: 403.
// - The TLS client must ask for the target by SNI (a handshake naming another host fails, one
//   naming none is closed), and the Host inside must be the target too (http/httpApi.ts, 421).
// - The tunnel is the one connection it arrived on under the HTTP connection cap; its handshake
//   must finish within the header timeout; once open, the HTTP server's timeouts apply.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { LocalCa } from '../../tls/localCa';
import { PROXIED_PORT, proxiedTarget } from './hosts';

export interface TunnelDeps {
  ca: LocalCa;
  /** The handshake must finish within this (the HTTP server's header timeout). */
  handshakeTimeoutMs: number;
  /** Answers on the raw socket and closes it (http/httpApi.ts rawJsonReply). */
  refuse(socket: Socket, status: string, message: string): void;
  /** Hands the decrypted stream of an open tunnel to the HTTP server. */
  serve(tls: TLSSocket, target: string): void;
  log(msg: string): void;
}

/** Answers one CONNECT request. */
export function openTunnel(deps: TunnelDeps, req: IncomingMessage, socket: Socket, head: Buffer): void {
  const authority = req.url ?? '';
  const target = proxiedTarget(authority);
  if (target === undefined) {
    deps.refuse(socket, '403 Forbidden', `CONNECT ${JSON.stringify(authority.slice(0, 100))} is refused: this proxy answers only for the APIs Test Inbox emulates (mailosaur.com, the provider API hosts), each by its full host name and port ${PROXIED_PORT}, and tunnels nothing anywhere (docs/compat.md)`);
    return;
  }
  const context = deps.ca.contextFor(target);
  if (context === undefined) {
    deps.refuse(socket, '403 Forbidden', `CONNECT ${target}: the local CA does not vouch for it`);
    return;
  }
  socket.on('error', () => socket.destroy());
  // A client that sends no handshake, or trickles it, does not keep the descriptor.
  const timer = setTimeout(() => socket.destroy(), deps.handshakeTimeoutMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  context.then(
    (secureContext) => {
      if (socket.destroyed) return;
      if (head.length > 0) socket.unshift(head);
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      const tls = new TLSSocket(socket, {
        isServer: true,
        secureContext,
        SNICallback: (name, cb) => (name.toLowerCase() === target ? cb(null, secureContext) : cb(new Error(`SNI ${name} is not the tunnel's target ${target}`))),
      });
      tls.on('error', () => tls.destroy());
      tls.once('close', () => socket.destroy());
      tls.once('secure', () => {
        clearTimeout(timer);
        // No SNI at all: the client did not ask for the target by name.
        if (tls.servername !== target) {
          tls.destroy();
          return;
        }
        deps.serve(tls, target);
      });
    },
    (e: unknown) => {
      deps.log(`compat: cannot make the certificate of ${target}: ${(e as Error).message}`);
      deps.refuse(socket, '502 Bad Gateway', `CONNECT ${target}: the local CA could not make its certificate`);
    },
  );
}
