// Loaded into every Windows Node process of `npm run test:windows` (NODE_OPTIONS --require), never
// into the product. Wine 8 refuses TCP keep-alive on a socket that is still connecting (the
// socket option fails with UNKNOWN, and the connect with it), which Windows itself allows; undici,
// and so Node's fetch, sets it before the connection is made. Here the call waits for the
// connection. Found with scripts/windows/run.ts; a Wine difference, not a Windows one.
'use strict';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a preload script: CommonJS by nature (NODE_OPTIONS --require)
const net = require('node:net');
const setKeepAlive = net.Socket.prototype.setKeepAlive;
net.Socket.prototype.setKeepAlive = function (enable, initialDelay) {
  if (this.connecting) {
    this.once('connect', () => setKeepAlive.call(this, enable, initialDelay));
    return this;
  }
  return setKeepAlive.call(this, enable, initialDelay);
};
