// Images over sharp: the format from the bytes, limits checked from the header before any
// decoding, and square resizing that keeps or drops animation as asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import {
  DEFAULT_IMAGE_LIMITS,
  INVALID_FORMAT,
  sharpImages,
  sniffImageFormat,
  TOO_LARGE,
  UNDECODABLE,
  type Images,
} from '../../src/infra/images.ts';
import { JsonableError } from '../../src/lib/errors.ts';
import {
  animated,
  COLORS,
  dominant,
  noisePng,
  pixel,
  pngClaiming,
  rotatedJpeg,
  solidJpeg,
  solidPng,
  splitPng,
} from '../support/images.ts';

const images = sharpImages();

/** Fails unless fn rejects with a 400 BAD_REQUEST JsonableError carrying exactly msg. */
async function refuses(fn: () => Promise<unknown>, msg: string): Promise<void> {
  await assert.rejects(fn, (err: unknown) => {
    assert.ok(err instanceof JsonableError, String(err));
    assert.deepEqual(
      { msg: err.message, code: err.code, status: err.httpStatus },
      { msg, code: 'BAD_REQUEST', status: 400 },
    );
    return true;
  });
}

test('inspect reads the format, size and frames from the bytes', async () => {
  assert.deepEqual(await images.inspect(await solidPng(40, 30)), {
    format: 'png',
    width: 40,
    height: 30,
    animated: false,
    frames: 1,
  });
  assert.deepEqual(await images.inspect(await solidJpeg(33, 17)), {
    format: 'jpeg',
    width: 33,
    height: 17,
    animated: false,
    frames: 1,
  });
  assert.deepEqual(await images.inspect(await animated(20, 10, [COLORS.RED, COLORS.GREEN])), {
    format: 'gif',
    width: 20,
    height: 10,
    animated: true,
    frames: 2,
  });
  assert.deepEqual(
    await images.inspect(await animated(16, 16, [COLORS.RED, COLORS.GREEN, COLORS.BLUE], 'webp')),
    { format: 'webp', width: 16, height: 16, animated: true, frames: 3 },
  );
  assert.deepEqual(
    await images.inspect(
      await sharp(await solidPng(12, 8))
        .webp()
        .toBuffer(),
    ),
    { format: 'webp', width: 12, height: 8, animated: false, frames: 1 },
  );
});

test('the format comes from the leading bytes only', async () => {
  assert.equal(sniffImageFormat(await solidPng(2, 2)), 'png');
  assert.equal(sniffImageFormat(await solidJpeg(2, 2)), 'jpeg');
  assert.equal(sniffImageFormat(await animated(2, 2, [COLORS.RED])), 'gif');
  assert.equal(sniffImageFormat(Buffer.from('GIF87a')), 'gif');
  assert.equal(sniffImageFormat(Buffer.from('RIFF\0\0\0\0WEBP')), 'webp');
  assert.equal(sniffImageFormat(Buffer.from('RIFF\0\0\0\0WAVE')), null);
  assert.equal(sniffImageFormat(Buffer.from('\x89PNG')), null);
  assert.equal(sniffImageFormat(Buffer.alloc(0)), null);
});

test('anything but PNG, JPEG, GIF and WebP is an invalid format, whatever it is called', async () => {
  const svg = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
  );
  const tiff = await sharp(await solidPng(4, 4))
    .tiff()
    .toBuffer();
  const avif = await sharp(await solidPng(4, 4))
    .avif()
    .toBuffer();
  for (const bytes of [
    Buffer.from('this is a text file, not a PNG\n'),
    Buffer.alloc(0),
    svg,
    tiff,
    avif,
    Buffer.from('%PDF-1.4\n'),
  ]) {
    await refuses(() => images.inspect(bytes), INVALID_FORMAT);
    await refuses(() => images.resizeSquare(bytes, 100), INVALID_FORMAT);
  }
});

test('a PNG whose bytes stop early cannot be decoded', async () => {
  const whole = await noisePng(200, 200);
  // Cut inside the header: nothing can be read.
  await refuses(() => images.inspect(whole.subarray(0, 30)), UNDECODABLE);
  // Cut inside the pixel data: the header reads, decoding fails.
  const half = whole.subarray(0, Math.floor(whole.length / 2));
  assert.deepEqual(await images.inspect(half), {
    format: 'png',
    width: 200,
    height: 200,
    animated: false,
    frames: 1,
  });
  await refuses(() => images.resizeSquare(half, 100), UNDECODABLE);
});

test('a header claiming a huge image is refused before decoding (decompression bomb)', async () => {
  const bomb = pngClaiming(100_000, 100_000);
  assert.ok(bomb.length < 1000);
  await refuses(() => images.inspect(bomb), TOO_LARGE);
  await refuses(() => images.resizeSquare(bomb, 100), TOO_LARGE);
  // Just over the limit is refused, just under is read.
  const side = Math.floor(Math.sqrt(DEFAULT_IMAGE_LIMITS.maxPixels));
  await refuses(() => images.inspect(pngClaiming(side + 1, side + 1)), TOO_LARGE);
  assert.equal((await images.inspect(pngClaiming(side, side))).width, side);
});

test('frame and total-pixel limits for animations', async () => {
  const limited: Images = sharpImages({ maxPixels: 500, maxFrames: 2, timeoutSeconds: 10 });
  const twoFrames = await animated(20, 20, [COLORS.RED, COLORS.BLUE]);
  const threeFrames = await animated(10, 10, [COLORS.RED, COLORS.BLUE, COLORS.GREEN]);
  await refuses(
    () => limited.inspect(threeFrames),
    'Animated image has too many frames (limit: 2)',
  );
  // 400 pixels a frame fits; both frames (800) do not, so only the first frame is kept.
  assert.equal((await limited.resizeSquare(twoFrames, 10)).animated, false);
  await refuses(() => limited.resizeSquare(twoFrames, 10, { keepAnimation: true }), TOO_LARGE);
  const big = await solidPng(30, 30);
  await refuses(() => limited.inspect(big), TOO_LARGE);
});

test('resizeSquare makes a square PNG of any still image', async () => {
  for (const input of [await solidPng(40, 30), await solidJpeg(300, 200), await solidPng(1, 1)]) {
    const out = await images.resizeSquare(input, 100);
    assert.deepEqual(
      { ...out, bytes: undefined },
      {
        bytes: undefined,
        format: 'png',
        contentType: 'image/png',
        width: 100,
        height: 100,
        animated: false,
      },
    );
    const meta = await sharp(out.bytes).metadata();
    assert.deepEqual(
      [meta.format, meta.width, meta.height, meta.pages],
      ['png', 100, 100, undefined],
    );
  }
});

test('resizeSquare crops to the centre rather than squeezing', async () => {
  // 300×100: red | blue halves. The centre square holds both colors side by side.
  const out = await images.resizeSquare(await splitPng(300, 100, COLORS.RED, COLORS.BLUE), 100);
  assert.deepEqual(await pixel(out.bytes, 5, 50), COLORS.RED);
  assert.deepEqual(await pixel(out.bytes, 95, 50), COLORS.BLUE);
});

test('resizeSquare applies the EXIF orientation of photos', async () => {
  // Stored top red, bottom blue; shown rotated clockwise: blue on the left, red on the right.
  const out = await images.resizeSquare(await rotatedJpeg(64), 100);
  const corners = [];
  for (const [x, y] of [
    [20, 20],
    [80, 20],
    [20, 80],
    [80, 80],
  ]) {
    corners.push(dominant(await pixel(out.bytes, x, y)));
  }
  assert.deepEqual(corners, ['b', 'r', 'b', 'r']);
});

test('animations: the first frame as PNG, or kept animated in their own format', async () => {
  const gif = await animated(40, 40, [COLORS.RED, COLORS.GREEN]);
  const still = await images.resizeSquare(gif, 100);
  assert.equal(still.format, 'png');
  assert.deepEqual(await images.inspect(still.bytes), {
    format: 'png',
    width: 100,
    height: 100,
    animated: false,
    frames: 1,
  });
  assert.deepEqual(await pixel(still.bytes, 50, 50), COLORS.RED);

  const moving = await images.resizeSquare(gif, 32, { keepAnimation: true });
  assert.deepEqual(
    { format: moving.format, type: moving.contentType, animated: moving.animated },
    {
      format: 'gif',
      type: 'image/gif',
      animated: true,
    },
  );
  assert.deepEqual(await images.inspect(moving.bytes), {
    format: 'gif',
    width: 32,
    height: 32,
    animated: true,
    frames: 2,
  });

  const webp = await animated(40, 40, [COLORS.RED, COLORS.GREEN, COLORS.BLUE], 'webp');
  const movingWebp = await images.resizeSquare(webp, 20, { keepAnimation: true });
  assert.equal(movingWebp.contentType, 'image/webp');
  assert.deepEqual(await images.inspect(movingWebp.bytes), {
    format: 'webp',
    width: 20,
    height: 20,
    animated: true,
    frames: 3,
  });
  // keepAnimation on a still image changes nothing: a PNG.
  assert.equal(
    (await images.resizeSquare(await solidJpeg(10, 10), 20, { keepAnimation: true })).format,
    'png',
  );
});
