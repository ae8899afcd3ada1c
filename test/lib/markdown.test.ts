import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  alertWordMatches,
  emojiCodeForName,
  emojiNameForCode,
  findAlertWords,
  isKnownEmojiName,
  parseContent,
  renderDescription,
  renderMarkdown,
  renderTopicLinks,
  scanMarkdown,
  type MarkdownLookups,
  type RenderedMarkdown,
} from '../../src/lib/markdown/index.ts';
import { builtinEmojiEntries } from '../../src/lib/markdown/emoji-data.ts';
import { sanitizeRenderedHtml } from '../../src/lib/markdown/sanitize.ts';
import { parseMarkdown } from '../../src/lib/markdown/parser.ts';

const LOOKUPS: MarkdownLookups = {
  users: [
    { id: 10, full_name: 'Iago', is_active: true },
    { id: 11, full_name: "Cordelia, Lear's daughter", is_active: true },
    { id: 12, full_name: 'Old Timer', is_active: false },
    { id: 14, full_name: 'Mark Twin', is_active: true },
    { id: 13, full_name: 'Mark Twin', is_active: true },
    { id: 15, full_name: 'Brother of Bobby|123', is_active: true },
    { id: 16, full_name: '<b>Bold</b> & Co', is_active: true },
  ],
  groups: [
    { id: 3, name: 'Backend' },
    { id: 4, name: 'hamletcharacters' },
    { id: 5, name: 'Retired', deactivated: true },
    { id: 6, name: '<i>Tags</i>' },
  ],
  channels: [
    { id: 1, name: 'Denmark' },
    { id: 2, name: 'general talk' },
    { id: 4, name: '& &amp; ü.x' },
  ],
  realmEmoji: [
    { id: 7, name: 'green_tick', source_url: '/user_avatars/2/emoji/7.png', deactivated: false },
    { id: 8, name: 'octopus', source_url: 'https://cdn.example/o.png', deactivated: false },
    { id: 9, name: 'heart', source_url: '/user_avatars/2/emoji/9.png', deactivated: true },
    { id: 10, name: 'evil', source_url: 'javascript:alert(1)', deactivated: false },
  ],
  realmUrl: 'https://chat.example.com',
};

const NONE: Omit<RenderedMarkdown, 'html'> = {
  mentionedUserIds: [],
  silentlyMentionedUserIds: [],
  mentionedGroupIds: [],
  streamWildcard: false,
  topicWildcard: false,
  isMeMessage: false,
  hasLink: false,
  hasImage: false,
  hasAttachment: false,
  linkUrls: [],
  attachmentPathIds: [],
};

type Case = [name: string, input: string, html: string, flags?: Partial<RenderedMarkdown>];

const BLANK = '<a href="https://example.com" rel="noopener noreferrer" target="_blank">';
const EXT = (href: string) => `<a href="${href}" rel="noopener noreferrer" target="_blank">`;
const IAGO = '<span class="user-mention" data-user-id="10">@Iago</span>';
const IAGO_SILENT = '<span class="user-mention silent" data-user-id="10">Iago</span>';
const ALL = '<span class="user-mention channel-wildcard-mention" data-user-id="*">';
const emoji = (name: string, code: string) =>
  `<span aria-label="${name.replace(/_/g, ' ')}" class="emoji emoji-${code}" role="img" title="${name.replace(/_/g, ' ')}">:${name}:</span>`;
const codeBlock = (body: string, lang?: string) =>
  `<div class="codehilite"${lang ? ` data-code-language="${lang}"` : ''}><pre><span></span><code>${body}</code></pre></div>`;
const DENMARK =
  '<a class="stream" data-stream-id="1" href="/#narrow/channel/1-Denmark">#Denmark</a>';

// prettier-ignore
const BASICS: Case[] = [
  ['paragraph', 'hello', '<p>hello</p>'],
  ['line breaks and paragraphs', 'a\nb\n\nc', '<p>a<br>\nb</p>\n<p>c</p>'],
  ['emphasis', '**bold** *italic* ~~strike~~ ***both***', '<p><strong>bold</strong> <em>italic</em> <del>strike</del> <em><strong>both</strong></em></p>'],
  ['no underscore emphasis', '__init__ _x_ snake_case_name', '<p>__init__ _x_ snake_case_name</p>'],
  ['headings', '# Title\n### Sub', '<h1>Title</h1>\n<h3>Sub</h3>'],
  ['no setext headings', 'Title\n===', '<p>Title<br>\n===</p>'],
  ['bullet list', '* a\n* b', '<ul>\n<li>a</li>\n<li>b</li>\n</ul>'],
  ['ordered list with start', '3. c\n4. d', '<ol start="3">\n<li>c</li>\n<li>d</li>\n</ol>'],
  ['quote', '> quoted *text*', '<blockquote>\n<p>quoted <em>text</em></p>\n</blockquote>'],
  ['quote fence', '```quote\nquoted **text**\n```\nafter', '<blockquote>\n<p>quoted <strong>text</strong></p>\n</blockquote>\n<p>after</p>'],
  ['tilde quote fence', '~~~quote\nq\n~~~', '<blockquote>\n<p>q</p>\n</blockquote>'],
  ['nested quote fences', '````quote\n```quote\ninner\n```\nouter\n````', '<blockquote>\n<blockquote>\n<p>inner</p>\n</blockquote>\n<p>outer</p>\n</blockquote>'],
  ['code block with language', '```python\nprint("hi")  \n```', codeBlock('print("hi")\n', 'Python')],
  ['language display names', '```c#\nx\n```', codeBlock('x\n', 'C#')],
  ['unknown language kept', '```foo-lang {.x}\nx\n```', codeBlock('x\n', 'foo-lang')],
  ['code block without language', '~~~\n<b>x</b> & y\n~~~', codeBlock('&lt;b&gt;x&lt;/b&gt; &amp; y\n')],
  ['indented code block', '    indented\n', codeBlock('indented\n')],
  ['unclosed fence', '```\nopen', codeBlock('open')],
  ['inline code escapes', 'run `<b>` & go', '<p>run <code>&lt;b&gt;</code> &amp; go</p>'],
  ['raw HTML is text', '<b>x</b>', '<p>&lt;b&gt;x&lt;/b&gt;</p>'],
  ['table without alignment styles', '| a | b |\n|--:|---|\n| 1 | 2 |', '<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>'],
  ['horizontal rule', 'a\n\n---\n\nb', '<p>a</p>\n<hr>\n<p>b</p>'],
  ['quotes and apostrophes stay', `"q" 'a'`, `<p>"q" 'a'</p>`],
];

// prettier-ignore
const MENTIONS: Case[] = [
  ['user mention', 'hi @**Iago**', `<p>hi ${IAGO}</p>`, { mentionedUserIds: [10] }],
  ['mention matches names case-insensitively and shows the real name', "@**CordeLIA, lear's daughter**", `<p><span class="user-mention" data-user-id="11">@Cordelia, Lear's daughter</span></p>`, { mentionedUserIds: [11] }],
  ['mention by name and id', '@**Iago|10**', `<p>${IAGO}</p>`, { mentionedUserIds: [10] }],
  ['mention by id alone', '@**|10**', `<p>${IAGO}</p>`, { mentionedUserIds: [10] }],
  ['name not matching the id', '@**Cordelia|10**', '<p>@**Cordelia|10**</p>'],
  ['unknown id', '@**|99**', '<p>@**|99**</p>'],
  ['full name ending in |digits', '@**Brother of Bobby|123**', '<p><span class="user-mention" data-user-id="15">@Brother of Bobby|123</span></p>', { mentionedUserIds: [15] }],
  ['duplicate names: the earliest account, or pick by id', '@**Mark Twin** @**Mark Twin|14**', '<p><span class="user-mention" data-user-id="13">@Mark Twin</span> <span class="user-mention" data-user-id="14">@Mark Twin</span></p>', { mentionedUserIds: [13, 14] }],
  ['unknown user stays text', '@**Nobody** here', '<p>@**Nobody** here</p>'],
  ['silent mention', '@_**Iago**', `<p>${IAGO_SILENT}</p>`, { silentlyMentionedUserIds: [10] }],
  ['deactivated user renders silently', '@**Old Timer**', '<p><span class="user-mention silent" data-user-id="12">Old Timer</span></p>', { silentlyMentionedUserIds: [12] }],
  ['mentioned and silently mentioned counts as mentioned', '@_**Iago** @**Iago**', `<p>${IAGO_SILENT} ${IAGO}</p>`, { mentionedUserIds: [10] }],
  ['mention inside a code span', '`@**Iago**`', '<p><code>@**Iago**</code></p>'],
  ['mention inside a fenced block', '```\n@**Iago** @**all** @*Backend*\n```', codeBlock('@**Iago** @**all** @*Backend*\n')],
  ['mention inside an indented block', '    @**Iago**', codeBlock('@**Iago**\n')],
  ['mention after a word character', 'a@**Iago**', '<p>a@<strong>Iago</strong></p>'],
  ['mention after punctuation that allows it', '(@**Iago**) "@**Iago**"', `<p>(${IAGO}) "${IAGO}"</p>`, { mentionedUserIds: [10] }],
  ['escaped mention', '\\@**Iago**', '<p>@<strong>Iago</strong></p>'],
  ['user names are escaped', '@**<b>bold</b> & co**', '<p><span class="user-mention" data-user-id="16">@&lt;b&gt;Bold&lt;/b&gt; &amp; Co</span></p>', { mentionedUserIds: [16] }],
  ['mention in a quote is silent', '> @**Iago** @**all** @*Backend*\n\nout', `<blockquote>\n<p>${IAGO_SILENT} ${ALL.replace('mention"', 'mention silent"')}all</span> <span class="user-group-mention silent" data-user-group-id="3">Backend</span></p>\n</blockquote>\n<p>out</p>`, { silentlyMentionedUserIds: [10] }],
  ['mention in a quote fence is silent', '```quote\n@**Iago** @**topic**\n```', `<blockquote>\n<p>${IAGO_SILENT} <span class="topic-mention silent">topic</span></p>\n</blockquote>`, { silentlyMentionedUserIds: [10] }],
  ['group mention', '@*backend*', '<p><span class="user-group-mention" data-user-group-id="3">@Backend</span></p>', { mentionedGroupIds: [3] }],
  ['silent group mention', '@_*hamletcharacters*', '<p><span class="user-group-mention silent" data-user-group-id="4">hamletcharacters</span></p>'],
  ['deactivated group renders silently', '@*Retired*', '<p><span class="user-group-mention silent" data-user-group-id="5">Retired</span></p>'],
  ['group names are escaped', '@*<i>tags</i>*', '<p><span class="user-group-mention" data-user-group-id="6">@&lt;i&gt;Tags&lt;/i&gt;</span></p>', { mentionedGroupIds: [6] }],
  ['unknown group stays text', '@*notagroup*', '<p>@*notagroup*</p>'],
  ['not a mention', '@ @**** @* x', '<p>@ @**** @* x</p>'],
  ...['all', 'everyone', 'channel', 'stream'].map((w): Case => [`channel wildcard @**${w}**`, `@**${w}**`, `<p>${ALL}@${w}</span></p>`, { streamWildcard: true }]),
  ['topic wildcard', '@**topic**', '<p><span class="topic-mention">@topic</span></p>', { topicWildcard: true }],
  ['silent wildcards set no flags', '@_**all** @_**topic**', `<p>${ALL.replace('mention"', 'mention silent"')}all</span> <span class="topic-mention silent">topic</span></p>`],
  ['wildcard names are case-sensitive', '@**All**', '<p>@**All**</p>'],
  ['bare @all is not a wildcard', '@all @topic', '<p>@all @topic</p>'],
];

// prettier-ignore
const LINKS: Case[] = [
  ['channel link', '#**Denmark**', `<p>${DENMARK}</p>`, { hasLink: true, linkUrls: ['/#narrow/channel/1-Denmark'] }],
  ['channel link, any case', '#**denmark**', `<p>${DENMARK}</p>`, { hasLink: true, linkUrls: ['/#narrow/channel/1-Denmark'] }],
  ['topic link', '#**Denmark>some topic**', '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/some.20topic">#Denmark &gt; some topic</a></p>', { hasLink: true, linkUrls: ['/#narrow/channel/1-Denmark/topic/some.20topic'] }],
  ['empty topic link', '#**Denmark>**', '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/">#Denmark &gt; <em>general chat</em></a></p>', { hasLink: true, linkUrls: ['/#narrow/channel/1-Denmark/topic/'] }],
  ['message link', '#**general talk>a.b/c@123**', '<p><a class="message-link" href="/#narrow/channel/2-general-talk/topic/a.2Eb.2Fc/near/123">#general talk &gt; a.b/c @ 💬</a></p>', { hasLink: true, linkUrls: ['/#narrow/channel/2-general-talk/topic/a.2Eb.2Fc/near/123'] }],
  ['channel and topic names are encoded and escaped', '#**& &amp; ü.x>t ü/"x"**', '<p><a class="stream-topic" data-stream-id="4" href="/#narrow/channel/4-.26-.26amp.3B-.C3.BC.2Ex/topic/t.20.C3.BC.2F.22x.22">#&amp; &amp;amp; ü.x &gt; t ü/"x"</a></p>', { hasLink: true, linkUrls: ['/#narrow/channel/4-.26-.26amp.3B-.C3.BC.2Ex/topic/t.20.C3.BC.2F.22x.22'] }],
  ['lone surrogate in a topic', '#**Denmark>\uD800**', '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/.EF.BF.BD">#Denmark &gt; \uD800</a></p>', { hasLink: true, linkUrls: ['/#narrow/channel/1-Denmark/topic/.EF.BF.BD'] }],
  ['unknown channel stays text', '#**nowhere** #**nowhere>t**', '<p>#**nowhere** #**nowhere&gt;t**</p>'],
  ['channel link inside code', '`#**Denmark**`', '<p><code>#**Denmark**</code></p>'],
  ['bare URL', 'see https://example.com', `<p>see ${BLANK}https://example.com</a></p>`, { hasLink: true, linkUrls: ['https://example.com'] }],
  ['bare host', 'www.example.org/a_b', `<p>${EXT('http://www.example.org/a_b')}www.example.org/a_b</a></p>`, { hasLink: true, linkUrls: ['http://www.example.org/a_b'] }],
  ['markdown link drops the title', '[text](https://example.com "title")', `<p>${BLANK}text</a></p>`, { hasLink: true, linkUrls: ['https://example.com'] }],
  ['empty link text shows the target', '[](https://example.com)', `<p>${BLANK}https://example.com</a></p>`, { hasLink: true, linkUrls: ['https://example.com'] }],
  ['image syntax stays a link', '![alt](https://example.com/i.png)', `<p>!${EXT('https://example.com/i.png')}alt</a></p>`, { hasLink: true, linkUrls: ['https://example.com/i.png'] }],
  ['autolink', '<https://example.com>', `<p>${BLANK}https://example.com</a></p>`, { hasLink: true, linkUrls: ['https://example.com'] }],
  ['email', 'mail a@b.com or [me](mailto:me@b.com)', `<p>mail ${EXT('mailto:a@b.com')}a@b.com</a> or ${EXT('mailto:me@b.com')}me</a></p>`, { hasLink: true, linkUrls: ['mailto:a@b.com', 'mailto:me@b.com'] }],
  ['query strings are escaped', '[x](https://e.com/?a=1&b=2)', `<p>${EXT('https://e.com/?a=1&amp;b=2')}x</a></p>`, { hasLink: true, linkUrls: ['https://e.com/?a=1&b=2'] }],
  ['narrow link opens in place', '[n](#narrow/channel/1-Denmark)', '<p><a href="#narrow/channel/1-Denmark">n</a></p>', { hasLink: true, linkUrls: ['#narrow/channel/1-Denmark'] }],
  ['absolute links into the organization become relative', '[n](https://chat.example.com/#narrow/channel/1) [f](https://chat.example.com/user_uploads/2/cd/y.pdf)', `<p><a href="#narrow/channel/1">n</a> ${EXT('/user_uploads/2/cd/y.pdf')}f</a></p>`, { hasLink: true, hasAttachment: true, linkUrls: ['#narrow/channel/1', '/user_uploads/2/cd/y.pdf'], attachmentPathIds: ['2/cd/y.pdf'] }],
  ['uploaded image', '[a.png](/user_uploads/2/ab/a.png)', `<p>${EXT('/user_uploads/2/ab/a.png')}a.png</a></p>`, { hasLink: true, hasImage: true, hasAttachment: true, linkUrls: ['/user_uploads/2/ab/a.png'], attachmentPathIds: ['2/ab/a.png'] }],
  ['disallowed link targets keep only the text', '[a](ftp://x) [b](/etc) [c](#top) [d](//evil.com) [e](irc://x)', '<p>a b c d e</p>'],
  ['bare host without a scheme in a link', '[x](example.com/a)', `<p>${EXT('http://example.com/a')}x</a></p>`, { hasLink: true, linkUrls: ['http://example.com/a'] }],
  ['mention inside link text', '[@**Iago**](https://example.com)', `<p>${BLANK}${IAGO}</a></p>`, { hasLink: true, linkUrls: ['https://example.com'], mentionedUserIds: [10] }],
];

// prettier-ignore
const EMOJI: Case[] = [
  ['emoji by name', ':smile: :big_smile:', `<p>${emoji('smile', '1f642')} ${emoji('big_smile', '1f604')}</p>`],
  ['emoji alias keeps the typed name', ':thumbs_up: :+1:', `<p>${emoji('thumbs_up', '1f44d')} ${emoji('+1', '1f44d')}</p>`],
  ['emoji next to text', 'mmm...:pizza:s', `<p>mmm...${emoji('pizza', '1f355')}s</p>`],
  ['realm emoji', ':green_tick:', '<p><img alt=":green_tick:" class="emoji" src="/user_avatars/2/emoji/7.png" title="green tick"></p>'],
  ['realm emoji wins over a built-in name', ':octopus:', '<p><img alt=":octopus:" class="emoji" src="https://cdn.example/o.png" title="octopus"></p>'],
  ['deactivated realm emoji falls back to the built-in one', ':heart:', `<p>${emoji('heart', '2764')}</p>`],
  ['realm emoji with an unsafe source is not rendered', ':evil:', '<p>:evil:</p>'],
  ['unknown emoji stays text', ':nope: 10:30:45', '<p>:nope: 10:30:45</p>'],
  ['emoji inside code', '`:smile:`', '<p><code>:smile:</code></p>'],
  ['Unicode emoji', 'hi 🐙😄', `<p>hi ${emoji('octopus', '1f419')}${emoji('big_smile', '1f604')}</p>`],
  ['text-presentation characters stay', '❤ © 1 #', '<p>❤ © 1 #</p>'],
  ['emoji presentation selector', '❤️ #️⃣', `<p>${emoji('heart', '2764')} ${emoji('hash', '0023-20e3')}</p>`],
  ['unknown Unicode emoji stays', '🫠', '<p>🫠</p>'],
];

// prettier-ignore
const ME: Case[] = [
  ['/me message', '/me is away', '<p>/me is away</p>', { isMeMessage: true }],
  ['/me over two lines', '/me is\naway', '<p>/me is<br>\naway</p>', { isMeMessage: true }],
  ['/me alone is not a status', '/me', '<p>/me</p>'],
  ['/me later is not a status', 'hi /me x', '<p>hi /me x</p>'],
];

for (const [group, cases] of Object.entries({ BASICS, MENTIONS, LINKS, EMOJI, ME })) {
  describe(`renderMarkdown: ${group}`, () => {
    for (const [name, input, html, flags] of cases) {
      test(name, () => {
        assert.deepEqual(renderMarkdown(input, LOOKUPS), { ...NONE, ...flags, html });
      });
    }
  });
}

test('rendering without lookups shows every reference as typed', () => {
  const input = '@**Iago** @*Backend* #**Denmark** :green_tick: :smile: @**all**';
  assert.deepEqual(renderMarkdown(input), {
    ...NONE,
    streamWildcard: true,
    html: `<p>@**Iago** @*Backend* #**Denmark** :green_tick: ${emoji('smile', '1f642')} ${ALL}@all</span></p>`,
  });
});

test('renderDescription renders the same Markdown', () => {
  assert.equal(
    renderDescription('**Danish** talk in #**Denmark** :smile:', LOOKUPS),
    `<p><strong>Danish</strong> talk in ${DENMARK} ${emoji('smile', '1f642')}</p>`,
  );
  assert.equal(renderDescription(''), '');
});

// Every tag and attribute the renderer may emit. Anything else in the output is a defect.
// prettier-ignore
const ALLOWED: Record<string, string[]> = {
  p: [], br: [], hr: [], h1: [], h2: [], h3: [], h4: [], h5: [], h6: [], strong: [], em: [],
  del: [], code: [], pre: [], blockquote: [], ul: [], ol: ['start'], li: [], table: [],
  thead: [], tbody: [], tr: [], th: [], td: [],
  a: ['class', 'data-stream-id', 'href', 'rel', 'target'],
  span: ['aria-label', 'class', 'data-user-id', 'data-user-group-id', 'role', 'title'],
  div: ['class', 'data-code-language'],
  img: ['alt', 'class', 'src', 'title'],
};
const SAFE_HREF = /^(?:https?:|mailto:|#narrow\/|\/#narrow\/|\/user_uploads\/)/i;
const SAFE_SRC = /^(?:https?:|\/(?![/\\]))/i;
const TAG = /<(\/?)([a-zA-Z0-9]+)((?:\s+[^\s=>]+="[^"]*")*)\s*>/g;

/** Checks the structure of rendered HTML and returns its tags, for further checks. */
function assertSafeHtml(html: string): string {
  const tags: string[] = [];
  const text = html.replace(TAG, (tag: string, _close: string, name: string, attrs: string) => {
    tags.push(tag);
    assert.ok(Object.hasOwn(ALLOWED, name), `tag <${name}> in ${html}`);
    for (const [, attr, value] of attrs.matchAll(/\s+([^\s=>]+)="([^"]*)"/g)) {
      assert.ok(ALLOWED[name].includes(attr), `attribute ${attr} on <${name}> in ${html}`);
      if (attr === 'href') assert.match(value, SAFE_HREF);
      if (attr === 'src') assert.match(value, SAFE_SRC);
      if (attr === 'href' || attr === 'src') {
        assert.doesNotMatch(
          value.replace(/[\s\p{Cc}]|&#?\w+;/gu, ''),
          /^(?:javascript|vbscript|data):/i,
        );
      }
    }
    return '';
  });
  // With every real tag removed no markup may remain: all text was escaped, so payloads such
  // as ' onclick="…"' can only appear as harmless text.
  assert.doesNotMatch(text, /[<>]/, `unescaped markup in ${html}`);
  assert.doesNotMatch(html, /<(?:script|style|iframe|svg|math|form|object)/i);
  // Tags with their attribute values blanked: what a browser would treat as attribute names.
  const markup = tags.join('').replace(/="[^"]*"/g, '=""');
  assert.doesNotMatch(markup, /\son\w+=|\sstyle=/i);
  return markup;
}

const XSS_LOOKUPS: MarkdownLookups = {
  users: [{ id: 1, full_name: '<script>alert(1)</script>', is_active: true }],
  groups: [{ id: 2, name: '<img src=x onerror=alert(1)>' }],
  channels: [
    { id: 3, name: '" onclick="alert(1)<img src=x' },
    { id: 4, name: 'Denmark' },
  ],
  realmEmoji: [
    { id: 5, name: 'js', source_url: 'javascript:alert(1)', deactivated: false },
    {
      id: 6,
      name: 'quote',
      source_url: 'https://e.com/a.png" onerror="alert(1)',
      deactivated: false,
    },
    {
      id: 7,
      name: 'data',
      source_url: 'data:image/svg+xml,<svg onload=alert(1)>',
      deactivated: false,
    },
  ],
};

// prettier-ignore
const XSS_PAYLOADS: Array<[payload: string, html?: string]> = [
  ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
  ['<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>'],
  ['[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>'],
  ['[x](JaVaScRiPt:alert(1))'],
  ['[x](&#106;avascript:alert(1))'],
  ['[x](&#x6A;avascript&#x3A;alert(1))'],
  ['[x](java&#09;script:alert(1))'],
  ['[x](%6Aavascript:alert(1))', '<p>x</p>'],
  ['[x](<java script:alert(1)>)', '<p>x</p>'],
  ['[x]( javascript:alert(1)  )'],
  ['[x](javascript://%0Aalert(1))'],
  ['[x](vbscript:msgbox(1))'],
  ['[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>'],
  ['<a href="jav&#x09;ascript:alert(1)">x</a>'],
  ['![x](javascript:alert(1))'],
  ['<javascript:alert(1)>', '<p>&lt;javascript:alert(1)&gt;</p>'],
  ['javascript:alert(1)', '<p>javascript:alert(1)</p>'],
  ['<svg onload=alert(1)>'],
  ['<style>body{display:none}</style>'],
  ['<iframe src="javascript:alert(1)"></iframe>'],
  ['<div style="position:fixed;top:0">x</div>'],
  ['<math><mi xlink:href="javascript:alert(1)">x</mi></math>'],
  ['<form action="javascript:alert(1)"><button>x</button></form>'],
  ['<<script>script>alert(1)<</script>/script>'],
  ['&lt;script&gt;alert(1)&lt;/script&gt;', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
  ['[x](https://example.com "a\\" onmouseover=\\"alert(1)")', `<p>${BLANK}x</a></p>`],
  ['[x"onmouseover="alert(1)](https://example.com)', `<p>${BLANK}x"onmouseover="alert(1)</a></p>`],
  ['[x](https://example.com/" onmouseover="alert(1))'],
  ['<https://example.com/" onmouseover="alert(1)>'],
  ['https://example.com/<script>alert(1)</script>'],
  ['```"><script>alert(1)</script>\nx\n```', codeBlock('x\n', '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;')],
  ['@**<b>x</b>**', '<p>@**&lt;b&gt;x&lt;/b&gt;**</p>'],
  ['@**<script>alert(1)</script>**', '<p><span class="user-mention" data-user-id="1">@&lt;script&gt;alert(1)&lt;/script&gt;</span></p>'],
  ['@*<img src=x onerror=alert(1)>*', '<p><span class="user-group-mention" data-user-group-id="2">@&lt;img src=x onerror=alert(1)&gt;</span></p>'],
  ['#**"><script>alert(1)</script>**', '<p>#**"&gt;&lt;script&gt;alert(1)&lt;/script&gt;**</p>'],
  ['#**Denmark>"><img src=x onerror=alert(1)>**'],
  [':js: :quote: :data:'],
  [':"onmouseover="alert(1):', '<p>:"onmouseover="alert(1):</p>'],
  ['@**"onmouseover="alert(1)**', '<p>@**"onmouseover="alert(1)**</p>'],
];

describe('renderMarkdown: XSS payloads', () => {
  for (const [payload, html] of XSS_PAYLOADS) {
    test(payload, () => {
      const out = renderMarkdown(payload, XSS_LOOKUPS).html;
      assertSafeHtml(out);
      if (html !== undefined) assert.equal(out, html);
    });
  }

  test('lookup values are escaped in attributes and text', () => {
    const out = renderMarkdown(':quote: #**" onclick="alert(1)<img src=x**', XSS_LOOKUPS).html;
    assert.equal(
      out,
      '<p><img alt=":quote:" class="emoji" src="https://e.com/a.png&quot; onerror=&quot;alert(1)" title="quote"> ' +
        '<a class="stream" data-stream-id="3" href="/#narrow/channel/3-.22-onclick.3D.22alert.281.29.3Cimg-src.3Dx">#" onclick="alert(1)&lt;img src=x</a></p>',
    );
  });

  test('realm emoji with script or data sources are not rendered', () => {
    assert.equal(renderMarkdown(':js: :data:', XSS_LOOKUPS).html, '<p>:js: :data:</p>');
  });
});

test('the sanitizer keeps only allowlisted tags, attributes, classes and URLs', () => {
  const dirty =
    '<p onclick="x()" style="color:red">a</p><script>alert(1)</script><style>p{}</style>' +
    '<a href="javascript:alert(1)" onmouseover="x()">j</a><a href="/settings">s</a>' +
    '<a href="//evil.com" class="stream evil">p</a><a href="https://ok.com" title="t">ok</a>' +
    '<img src="data:image/png;base64,AA" alt="d"><img src="/ok.png" class="emoji other">' +
    '<span class="emoji emoji-1f642 x" data-x="1">e</span><div class="codehilite" style="x">d</div>' +
    '<iframe src="https://x.com"></iframe><br/>';
  assert.equal(
    sanitizeRenderedHtml(dirty),
    '<p>a</p><a>j</a><a>s</a><a class="stream">p</a><a href="https://ok.com">ok</a>' +
      '<img alt="d"><img src="/ok.png" class="emoji">' +
      '<span class="emoji emoji-1f642">e</span><div class="codehilite">d</div><br>',
  );
});

// prettier-ignore
const DANGEROUS_PIECES = [
  '<script>', '</script>', '<img src=x onerror=alert(1)>', 'javascript:', 'JaVaScRiPt:', '"', "'",
  '[x](', ')', '](', '<', '>', '&#106;', '&#x3A;', '@**', '@*', '#**', '**', '*', ':', '`', '```',
  '\n', '> ', 'onload=', ' onclick="', 'style="', 'data:', 'Iago', 'Denmark', '|1', '_', '~~',
  'https://example.com', 'www.x.org', '/user_uploads/', '#narrow/', '\\', '!', 'quote', '😄',
];

describe('renderMarkdown: properties', () => {
  const runs = Number(process.env.PARLEY_FUZZ_RUNS ?? 300);
  const lookups: MarkdownLookups = {
    ...XSS_LOOKUPS,
    users: [...XSS_LOOKUPS.users!, { id: 9, full_name: 'Iago', is_active: true }],
  };
  const check = (input: string) => {
    const out = renderMarkdown(input, lookups);
    const markup = assertSafeHtml(out.html);
    assert.doesNotMatch(out.html, /<script/i);
    assert.doesNotMatch(markup, /\son\w+=/i);
  };

  test('arbitrary strings render to safe HTML without throwing', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), check), { numRuns: runs });
  });

  test('strings built from dangerous fragments render to safe HTML', () => {
    const arb = fc
      .array(fc.constantFrom(...DANGEROUS_PIECES), { maxLength: 40 })
      .map((p) => p.join(''));
    fc.assert(fc.property(arb, check), { numRuns: runs });
  });

  test('scanMarkdown never throws and never reports names from code', () => {
    const arb = fc
      .array(fc.constantFrom(...DANGEROUS_PIECES), { maxLength: 40 })
      .map((p) => p.join(''));
    fc.assert(
      fc.property(arb, (input) => {
        const scan = scanMarkdown('````\n' + input.replace(/`/g, '') + '\n````');
        assert.deepEqual(
          [scan.userNames, scan.groupNames, scan.channelNames, scan.emojiNames],
          [[], [], [], []],
        );
      }),
      { numRuns: runs },
    );
  });

  test('pathological inputs render', () => {
    for (const input of [
      '*'.repeat(10000),
      '['.repeat(10000),
      '@**'.repeat(3000),
      '> '.repeat(3000) + 'x',
      ':a'.repeat(5000),
      '`'.repeat(10000),
    ]) {
      assertSafeHtml(renderMarkdown(input, lookups).html);
    }
  });
});

describe('scanMarkdown', () => {
  test('collects every name referred to outside code', () => {
    const scan = scanMarkdown(
      '@**Iago** @_**Cordelia** @**Iago** @**Pat|5** @**|6** @**all** @**topic** @*Backend* @_*Ops* ' +
        '#**Denmark** #**Sweden>topic** #**Norway>t@12** :smile: :green_tick: 😄\n' +
        '> @**Quoted**\n\n`@**InCode** :code:`\n```\n@**InFence** #**Fence** :fence:\n```\n    @**Indented**',
    );
    assert.deepEqual(scan, {
      userNames: ['Iago', 'Cordelia', 'Pat|5', '|6', 'Quoted'],
      userIds: [5, 6],
      groupNames: ['Backend', 'Ops'],
      channelNames: ['Denmark', 'Sweden', 'Norway'],
      emojiNames: ['smile', 'green_tick'],
      plainText:
        '@**Iago** @_**Cordelia** @**Iago** @**Pat|5** @**|6** @**all** @**topic** @*Backend* @_*Ops* ' +
        '#**Denmark** #**Sweden>topic** #**Norway>t@12** :smile: :green_tick: :big_smile:\n@**Quoted**\n',
      isMeMessage: false,
    });
  });

  test('quote fences are scanned, code fences are not', () => {
    const scan = scanMarkdown('/me says\n```quote\n@**Q**\n```\n```python\n@**C**\n```');
    assert.deepEqual([scan.userNames, scan.isMeMessage], [['Q'], true]);
  });
});

describe('alert words', () => {
  // prettier-ignore
  const cases: Array<[content: string, words: string[], expected: string[]]> = [
    ['Hello World', ['world'], ['world']],
    ['HELLO there', ['Hello', 'THERE'], ['Hello', 'THERE']],
    ['worldwide and underworld', ['world'], []],
    ['snake_world', ['world'], []],
    ['(world), "world"! world.', ['world'], ['world']],
    ['the release train leaves', ['release train'], ['release train']],
    ['a `secret` here\n```\nsecret\n```\n    secret', ['secret'], []],
    ['> quoted secret', ['secret'], ['secret']],
    ['Straße und strasse', ['STRASSE', 'straße', 'ß'], ['STRASSE', 'straße']],
    ['x', ['', '   '], []],
    ['café', ['caf'], []],
    ['ping @**Iago**', ['iago'], ['iago']],
    ['dup dup', ['dup', 'dup'], ['dup']],
  ];
  for (const [content, words, expected] of cases) {
    test(`${JSON.stringify(content)} with ${JSON.stringify(words)}`, () => {
      assert.deepEqual(alertWordMatches(content, words), expected);
      assert.deepEqual(findAlertWords(scanMarkdown(content).plainText, words), expected);
    });
  }
});

describe('renderTopicLinks', () => {
  test('plain topics have no links', () => {
    assert.deepEqual(renderTopicLinks('No links here #123'), []);
  });
  test('web URLs in topics are links; bare hosts get https', () => {
    assert.deepEqual(renderTopicLinks('see https://x.com/a and zulip.com/foo, not a@b.com'), [
      { text: 'https://x.com/a', url: 'https://x.com/a' },
      { text: 'zulip.com/foo', url: 'https://zulip.com/foo' },
    ]);
  });
});

describe('built-in emoji', () => {
  test('names, aliases and codes', () => {
    assert.equal(emojiCodeForName('smile'), '1f642');
    assert.equal(emojiCodeForName('+1'), '1f44d');
    assert.equal(emojiCodeForName('thumbs_up'), '1f44d');
    assert.equal(emojiCodeForName('octopus'), '1f419');
    assert.equal(emojiCodeForName('tada'), '1f389');
    assert.equal(emojiCodeForName('nope'), undefined);
    assert.equal(emojiCodeForName('constructor'), undefined);
    assert.equal(isKnownEmojiName('heart'), true);
    assert.equal(isKnownEmojiName('__proto__'), false);
    assert.equal(emojiNameForCode('1f44d'), '+1');
  });

  test('every entry is well formed and maps back to its canonical name', () => {
    const entries = builtinEmojiEntries();
    assert.ok(entries.length > 300);
    for (const [name, code] of entries) {
      assert.match(name, /^[a-z0-9_+-]+$/);
      assert.match(code, /^[0-9a-f]{4,5}(?:-[0-9a-f]{4,5})*$/);
      assert.equal(emojiCodeForName(emojiNameForCode(code)!), code);
    }
  });
});

describe('plain text', () => {
  // Pieces of text that Markdown may or may not treat as syntax: words that make links
  // (example.com, mailto:), list and heading starts, emoji names, white space.
  const piece = fc.constantFrom(
    'a',
    'Z',
    'word',
    'www',
    'example',
    'com',
    'http',
    'https',
    'mailto',
    'ftp',
    'smile',
    '1',
    '42',
    ' ',
    '  ',
    ',',
    "'",
    '?',
    '!',
    '.',
    ':',
    '//',
    '-',
    '*',
    '#',
    '@',
    '_',
    '\n',
    '<',
    '&',
    '"',
    '(',
    ')',
    '1.',
    'a.b',
  );
  // Mostly from the pieces plain text is made of, so that many texts take the short path.
  const plainPiece = fc.constantFrom(
    'a',
    'Z',
    'word',
    'com',
    '1',
    ' ',
    ',',
    "'",
    '?',
    '. ',
    ': ',
    '(',
    ')',
    '"',
    ';',
    '/',
    '-',
  );
  const join = (p: fc.Arbitrary<string>) =>
    fc.array(p, { minLength: 1, maxLength: 30 }).map((parts) => parts.join(''));
  const text = fc.oneof(join(piece), join(plainPiece));

  test('renders and scans as the parser does, wherever the parser is skipped', () => {
    let skipped = 0;
    fc.assert(
      fc.property(text, (content) => {
        const parsed = parseContent(content);
        if (parsed.tokens !== null) return;
        skipped++;
        const full = { content, tokens: parseMarkdown(content) };
        assert.deepEqual(scanMarkdown(parsed), scanMarkdown(full));
        assert.deepEqual(renderMarkdown(parsed, LOOKUPS), renderMarkdown(full, LOOKUPS));
      }),
      { numRuns: 3000 },
    );
    // The property says something only if many texts took the short path.
    assert.ok(skipped > 300, `only ${skipped} texts were plain`);
  });

  test('what the parser must see is parsed', () => {
    for (const content of [
      'see example.com',
      'mail a@b.co',
      'Hi :smile:',
      '1. first',
      'Hello @**Iago**',
      'two\nlines',
      'trailing ',
      ' leading',
      'x <b>y</b>',
      'fish & chips',
    ]) {
      assert.notEqual(parseContent(content).tokens, null, content);
    }
    assert.equal(renderMarkdown('Ready? Yes: go.').html, '<p>Ready? Yes: go.</p>');
    assert.equal(parseContent('Say "hi" (twice); a/b - c').tokens, null);
  });
});
