// Real images made with sharp for upload tests (icons now, emoji and avatars later), and
// hostile ones: truncated files, text posing as an image, and a header claiming a size
// that would take gigabytes to decode.
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';

type Rgb = { r: number; g: number; b: number };
const RED: Rgb = { r: 255, g: 0, b: 0 };
const BLUE: Rgb = { r: 0, g: 0, b: 255 };
const GREEN: Rgb = { r: 0, g: 255, b: 0 };

export const COLORS = { RED, BLUE, GREEN };

export function solidPng(width: number, height: number, color: Rgb = RED): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { ...color, alpha: 1 } } })
    .png()
    .toBuffer();
}

export function solidJpeg(width: number, height: number, color: Rgb = BLUE): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } })
    .jpeg()
    .toBuffer();
}

/** Left half one color, right half another. */
export async function splitPng(width: number, height: number, left: Rgb, right: Rgb) {
  const half = Math.floor(width / 2);
  return sharp({ create: { width, height, channels: 3, background: left } })
    .composite([
      {
        input: { create: { width: width - half, height, channels: 3, background: right } },
        left: half,
        top: 0,
      },
    ])
    .png()
    .toBuffer();
}

/** A JPEG stored top-red/bottom-blue that asks to be shown rotated 90° clockwise (EXIF 6). */
export async function rotatedJpeg(size: number): Promise<Buffer> {
  const half = Math.floor(size / 2);
  return sharp({ create: { width: size, height: size, channels: 3, background: RED } })
    .composite([
      {
        input: { create: { width: size, height: size - half, channels: 3, background: BLUE } },
        left: 0,
        top: half,
      },
    ])
    .jpeg({ quality: 95 })
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

/** An animated image of the given frames (solid colors), as GIF or WebP. */
export async function animated(
  width: number,
  height: number,
  colors: Rgb[],
  format: 'gif' | 'webp' = 'gif',
): Promise<Buffer> {
  const frames = await Promise.all(
    colors.map((c) =>
      sharp({ create: { width, height, channels: 4, background: { ...c, alpha: 1 } } })
        .raw()
        .toBuffer(),
    ),
  );
  const strip = sharp(Buffer.concat(frames), {
    raw: { width, height: height * colors.length, channels: 4, pageHeight: height },
  });
  const delay = colors.map(() => 100);
  return format === 'gif'
    ? strip.gif({ delay, loop: 0 }).toBuffer()
    : strip.webp({ delay, loop: 0 }).toBuffer();
}

/** Random pixels compress badly: a valid PNG of roughly width*height*3 bytes. */
export function noisePng(width: number, height: number): Promise<Buffer> {
  return sharp({
    create: {
      width,
      height,
      channels: 3,
      background: { r: 128, g: 128, b: 128 },
      noise: { type: 'gaussian', mean: 128, sigma: 60 },
    },
  })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A well-formed PNG of a few hundred bytes whose header claims width×height pixels
 * (100000×100000 RGB would need 30 GB decoded).
 */
export function pngClaiming(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.alloc(1024))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The color of one pixel of an image, as sharp decodes it. */
export async function pixel(image: Buffer, x: number, y: number): Promise<Rgb> {
  const { data, info } = await sharp(image)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * info.channels;
  return { r: data[i], g: data[i + 1], b: data[i + 2] };
}

/** The channel that clearly dominates a color (lossy results), or 'mixed'. */
export function dominant(c: Rgb): 'r' | 'g' | 'b' | 'mixed' {
  const [first, second] = (['r', 'g', 'b'] as const)
    .map((k) => [k, c[k]] as const)
    .sort((a, b) => b[1] - a[1]);
  return first[1] - second[1] >= 128 ? first[0] : 'mixed';
}
