// Image inspection and resizing over sharp, for organization icons now and custom emoji
// and avatars later. The format comes from the bytes, never from the file name or the
// client's content type, and oversized images are refused from their header, before
// anything is decoded (a small file can claim billions of pixels).
import sharp, { type Metadata, type Sharp } from 'sharp';
import { badRequest } from '../lib/errors.ts';

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
export type OutputFormat = 'png' | 'gif' | 'webp';

export interface ImageInfo {
  format: ImageFormat;
  /** Of one frame. */
  width: number;
  height: number;
  animated: boolean;
  frames: number;
}

export interface ResizedImage {
  bytes: Buffer;
  format: OutputFormat;
  contentType: string;
  width: number;
  height: number;
  animated: boolean;
}

export interface ResizeOptions {
  /** Keep an animated GIF or WebP animated (in its own format); otherwise the first frame as PNG. */
  keepAnimation?: boolean;
}

export interface Images {
  /** What the bytes are; throws a JsonableError for anything but a PNG, JPEG, GIF or WebP within the limits. */
  inspect(bytes: Buffer): Promise<ImageInfo>;
  /** Crop to the centre square and scale to size×size. */
  resizeSquare(bytes: Buffer, size: number, opts?: ResizeOptions): Promise<ResizedImage>;
}

export interface ImageLimits {
  /** Largest image, in pixels of one frame, and of all frames when decoded animated. */
  maxPixels: number;
  maxFrames: number;
  /** Longest one decode may take. */
  timeoutSeconds: number;
}

export const DEFAULT_IMAGE_LIMITS: ImageLimits = {
  maxPixels: 50_000_000,
  maxFrames: 500,
  timeoutSeconds: 10,
};

const CONTENT_TYPES: Record<OutputFormat, string> = {
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
};

export const INVALID_FORMAT = 'Invalid image format';
export const TOO_LARGE = 'Image size exceeds limit.';
export const UNDECODABLE = 'Could not decode image; did you upload an image file?';

/**
 * The format the leading bytes announce. Checked before sharp sees the bytes, so the
 * decoders of formats not accepted (SVG, TIFF, HEIF, PDF, …) never run on uploads.
 */
export function sniffImageFormat(bytes: Buffer): ImageFormat | null {
  const ascii = (start: number, end: number) => bytes.subarray(start, end).toString('latin1');
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && ascii(4, 8) === '\r\n\x1a\n')
    return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)
    return 'jpeg';
  if (bytes.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) return 'gif';
  if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  return null;
}

/** sharp's errors in the words a client should see. */
function describeFailure(err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  if (/unsupported image format/i.test(message)) return badRequest(INVALID_FORMAT);
  if (/pixel limit/i.test(message)) return badRequest(TOO_LARGE);
  if (/timeout/i.test(message)) return badRequest('Image took too long to process');
  return badRequest(UNDECODABLE);
}

export function sharpImages(limits: ImageLimits = DEFAULT_IMAGE_LIMITS): Images {
  async function inspect(bytes: Buffer): Promise<ImageInfo> {
    const sniffed = sniffImageFormat(bytes);
    if (!sniffed) throw badRequest(INVALID_FORMAT);
    let meta: Metadata;
    try {
      // Reads the header only; sharp refuses a header claiming more pixels than the limit.
      meta = await sharp(bytes, { limitInputPixels: limits.maxPixels }).metadata();
    } catch (err) {
      throw describeFailure(err);
    }
    if (meta.format !== sniffed) throw badRequest(INVALID_FORMAT);
    const width = meta.width ?? 0;
    const height = meta.pageHeight ?? meta.height ?? 0;
    if (width < 1 || height < 1) throw badRequest(UNDECODABLE);
    if (width * height > limits.maxPixels) throw badRequest(TOO_LARGE);
    const frames = meta.pages ?? 1;
    if (frames > limits.maxFrames) {
      throw badRequest(`Animated image has too many frames (limit: ${limits.maxFrames})`);
    }
    return { format: sniffed, width, height, animated: frames > 1, frames };
  }

  async function resizeSquare(
    bytes: Buffer,
    size: number,
    opts: ResizeOptions = {},
  ): Promise<ResizedImage> {
    const info = await inspect(bytes);
    const animated = info.animated && opts.keepAnimation === true && info.format !== 'png';
    if (animated && info.width * info.height * info.frames > limits.maxPixels)
      throw badRequest(TOO_LARGE);
    const format: OutputFormat = animated ? (info.format as 'gif' | 'webp') : 'png';
    let pipeline: Sharp = sharp(bytes, { limitInputPixels: limits.maxPixels, animated });
    // Photos carry their orientation in EXIF; apply it, since the output drops metadata.
    if (!animated) pipeline = pipeline.rotate();
    pipeline = pipeline
      .resize(size, size, { fit: 'cover', position: 'centre' })
      .timeout({ seconds: limits.timeoutSeconds });
    pipeline =
      format === 'gif' ? pipeline.gif() : format === 'webp' ? pipeline.webp() : pipeline.png();
    try {
      const out = await pipeline.toBuffer();
      return {
        bytes: out,
        format,
        contentType: CONTENT_TYPES[format],
        width: size,
        height: size,
        animated,
      };
    } catch (err) {
      throw describeFailure(err);
    }
  }

  return { inspect, resizeSquare };
}
