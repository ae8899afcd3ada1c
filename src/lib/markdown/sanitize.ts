// The last step of every rendering: an explicit allowlist of tags, attributes, classes and URL
// forms. The renderer already escapes all raw HTML; this guards against its own mistakes.

import sanitizeHtml from 'sanitize-html';
import { isSafeImageSrc, safeLinkHref } from './urls.ts';

const ALLOWED_TAGS = [
  'p',
  'br',
  'hr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'strong',
  'em',
  'del',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'a',
  'span',
  'div',
  'img',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
];

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: {
    a: ['class', 'data-stream-id', 'href', 'rel', 'target'],
    span: ['aria-label', 'class', 'data-user-id', 'data-user-group-id', 'role', 'title'],
    div: ['class', 'data-code-language'],
    img: ['alt', 'class', 'src', 'title'],
    ol: ['start'],
  },
  allowedClasses: {
    a: ['stream', 'stream-topic', 'message-link'],
    span: [
      'user-mention',
      'user-group-mention',
      'topic-mention',
      'channel-wildcard-mention',
      'silent',
      'emoji',
      'emoji-*',
    ],
    div: ['codehilite'],
    img: ['emoji'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  allowedStyles: {},
  parseStyleAttributes: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    // Scheme checks alone would let any relative URL through; allow only the app's own paths.
    a: (tagName, attribs) => {
      const { href, ...rest } = attribs;
      const safe = href === undefined ? null : safeLinkHref(href);
      return { tagName, attribs: safe === href && safe !== null ? attribs : rest };
    },
    img: (tagName, attribs) => {
      const { src, ...rest } = attribs;
      return { tagName, attribs: src !== undefined && isSafeImageSrc(src) ? attribs : rest };
    },
  },
};

export function sanitizeRenderedHtml(html: string): string {
  // sanitize-html closes void elements as " />"; the reference prints "<br>" and "<img …>".
  // Text and attribute values have '>' escaped, so " />" only ever ends a tag.
  return sanitizeHtml(html, OPTIONS).replace(/ \/>/g, '>');
}
