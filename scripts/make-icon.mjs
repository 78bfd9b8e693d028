// Draws media/icon.png (128×128, the marketplace icon) with no dependencies: shapes are
// sampled 4×4 per pixel for anti-aliasing and encoded as PNG with node:zlib.
// Run: node scripts/make-icon.mjs
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 128;
const SS = 4; // samples per axis per pixel

const hex = (h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
const roundRect = (x0, y0, x1, y1, r) => (x, y) => {
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return x >= x0 && x <= x1 && y >= y0 && y <= y1 && (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
};
const circle = (cx, cy, r) => (x, y) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
const segment = (ax, ay, bx, by, w) => (x, y) => {
  const dx = bx - ax, dy = by - ay;
  const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
  return (x - ax - t * dx) ** 2 + (y - ay - t * dy) ** 2 <= (w / 2) ** 2;
};
const union = (...fs) => (x, y) => fs.some((f) => f(x, y));

// Layers, bottom to top: [shape, color or (x, y) => color].
const layers = [
  [roundRect(0, 0, 128, 128, 26), (_x, y) => { const a = hex('#1e3a5f'), b = hex('#0f172a'); const t = y / 128; return a.map((v, i) => Math.round(v + (b[i] - v) * t)); }],
  [roundRect(18, 34, 104, 94, 8), hex('#f8fafc')],
  [union(segment(22, 39, 61, 68, 6), segment(61, 68, 100, 39, 6)), hex('#1e3a5f')],
  [circle(98, 94, 23), hex('#0f172a')],
  [circle(98, 94, 19), hex('#10b981')],
  [union(segment(88, 95, 95, 102, 5.5), segment(95, 102, 109, 86, 5.5)), hex('#ffffff')],
];

const rgba = Buffer.alloc(SIZE * SIZE * 4);
for (let py = 0; py < SIZE; py++) {
  for (let px = 0; px < SIZE; px++) {
    let r = 0, g = 0, b = 0, a = 0;
    for (let sy = 0; sy < SS; sy++) {
      for (let sx = 0; sx < SS; sx++) {
        const x = px + (sx + 0.5) / SS, y = py + (sy + 0.5) / SS;
        let c = null;
        for (const [shape, color] of layers) if (shape(x, y)) c = typeof color === 'function' ? color(x, y) : color;
        if (c) { r += c[0]; g += c[1]; b += c[2]; a += 1; }
      }
    }
    const o = (py * SIZE + px) * 4;
    // Premultiplied average → straight alpha.
    rgba[o] = a ? Math.round(r / a) : 0;
    rgba[o + 1] = a ? Math.round(g / a) : 0;
    rgba[o + 2] = a ? Math.round(b / a) : 0;
    rgba[o + 3] = Math.round((a / (SS * SS)) * 255);
  }
}

const crcTable = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
const crc32 = (buf) => { let c = 0xffffffff; for (const byte of buf) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
const chunk = (type, data) => {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
};
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(SIZE, 0); ihdr.writeUInt32BE(SIZE, 4);
ihdr[8] = 8; ihdr[9] = 6; // 8-bit RGBA
const raw = Buffer.alloc(SIZE * (SIZE * 4 + 1));
for (let y = 0; y < SIZE; y++) rgba.copy(raw, y * (SIZE * 4 + 1) + 1, y * SIZE * 4, (y + 1) * SIZE * 4);
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
const out = new URL('../media/icon.png', import.meta.url);
writeFileSync(out, png);
console.log(`wrote ${out.pathname} (${png.length} bytes)`);
