#!/usr/bin/env node
// Writes the tokenizer parity corpus: JSON lines of strings, the same for a
// given --seed and --count on every machine (a fixed PRNG, no download).
// What it covers: many scripts and languages, emoji (ZWJ sequences, flags,
// skin tones, keycaps, tag sequences), source code, whitespace runs (tabs,
// newlines, CR LF, U+0085, U+FEFF, U+00A0, U+3000, U+180E, U+2028, ...),
// digit runs in several numeral systems, special tokens written in text
// (whole and cut), long words, combining characters, NFC/NFKC-sensitive
// text, control characters, and random mixes of all of these.
//
//   node scripts/gen-tokenizer-corpus.mjs [--count 6000] [--seed 19] [--sample N] > corpus.jsonl
//
// --sample N keeps N strings spread evenly over the corpus (the lit test's
// sample: a few of every kind). --records writes each string as a
// little-endian u32 byte length and its UTF-8 instead of JSON lines (for
// test/runtime/tokenizer_check.c, which has no JSON parser).
//
// Letters come only from scripts of Unicode 14 or older: the runtime's PCRE2
// (Debian's 10.42) knows Unicode 14, and a letter it does not know would
// test the library's age, not the tokenizer.

const args = process.argv.slice(2);
function option(name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}
const count = option('--count', 6000);
const seed = option('--seed', 19);
const sample = option('--sample', 0);

// mulberry32: small, fast and the same everywhere.
let state = seed >>> 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(random() * n);
const pick = (list) => list[int(list.length)];
const repeat = (n, f) => Array.from({ length: n }, f).join('');

const languages = {
  english: 'The quick brown fox jumps over the lazy dog. I\'m sure they\'ll say it\'s what we\'ve DONE, don\'t you think? Tokenizers split words into pieces.',
  french: 'Où est la bibliothèque ? L\'élève a répondu : « Ça dépend de l\'heure. » Noël, cœur, façade, naïveté.',
  german: 'Größere Straßen führen über die Brücke. Äpfel, Öl und Übermut; die Donaudampfschifffahrtsgesellschaft.',
  spanish: '¿Dónde está el niño? ¡Qué mañana tan bonita! El pingüino comió jalapeños.',
  portuguese: 'Não há razão para ação sem coração; informações e situações.',
  vietnamese: 'Tiếng Việt có nhiều dấu thanh: người, những, được, trường học, Hà Nội.',
  polish: 'Zażółć gęślą jaźń. Łódź jest dużym miastem w Polsce.',
  turkish: 'İstanbul\'da ılık bir gün; ĞÜŞİÖÇ ğüşıöç.',
  russian: 'Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России.',
  ukrainian: 'Гей, хлопці, вставайте! Їжак, ґанок, європейський.',
  greek: 'Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.',
  arabic: 'مرحبا بالعالم. اللغة العربية جميلة جداً، وهي لغة القرآن الكريم.',
  hebrew: 'שלום עולם. עברית נכתבת מימין לשמאל, עם ניקוד: שָׁלוֹם.',
  persian: 'زبان فارسی زیباست. می‌خواهم کتاب بخوانم.',
  hindi: 'नमस्ते दुनिया। हिन्दी देवनागरी लिपि में लिखी जाती है। क़िला, ज़रूर।',
  bengali: 'আমি বাংলায় গান গাই। বাংলা ভাষা সুন্দর।',
  tamil: 'தமிழ் ஒரு பழமையான மொழி. வணக்கம் உலகம்.',
  thai: 'ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ สวัสดีครับ ขอบคุณมาก',
  chinese: '我们今天去公园散步，天气非常好。中华人民共和国成立于一九四九年。繁體中文與简体中文。',
  japanese: '今日はいい天気ですね。カタカナとひらがなと漢字を使います。ｶﾀｶﾅ半角も。',
  korean: '안녕하세요, 세계! 한국어는 한글로 씁니다. 대한민국의 수도는 서울입니다.',
  georgian: 'ქართული ენა ძალიან ლამაზია.',
  armenian: 'Հայերենը հնդեվրոպական լեզու է։',
  amharic: 'አማርኛ የኢትዮጵያ ቋንቋ ነው።',
  khmer: 'ភាសាខ្មែរ គឺជាភាសាផ្លូវការ។',
  sinhala: 'සිංහල භාෂාව ලස්සනයි.',
  mongolian: 'ᠮᠣᠩᠭᠣᠯ ᠪᠢᠴᠢᠭ᠌ and Монгол хэл',
};
const languageNames = Object.keys(languages);

const emoji = [
  '😀', '😂', '🥲', '👍', '👍🏽', '👋🏿', '❤️', '🔥', '✨', '🎉', '🚀', '🤖', '🧠',
  '👨‍👩‍👧‍👦', '👩‍💻', '🧑🏾‍🚀', '🏳️‍🌈', '🏴‍☠️', '❤️‍🔥', '👁️‍🗨️', '🐕‍🦺',
  '🇫🇷', '🇯🇵', '🇺🇸', '🇧🇷', '🇮🇳', '🇺🇦', '🏴󠁧󠁢󠁥󠁮󠁧󠁿', '#️⃣', '1️⃣', '©️', '™',
  '🫠', '🫶🏼', '🪿', '🫨',
];

const code = [
  'int main(int argc, char **argv) {\n\treturn argc > 1 ? 0 : 1;\n}\n',
  'def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n',
  'const xs = [1, 2, 3].map((x) => x * 2); // doubled\nconsole.log(`${xs}`);',
  '{"name": "afm", "version": "1.0.0", "deps": {"a": "^2.3.4"}, "ok": true}',
  '<div class="row"><a href="https://example.com/path?q=1&r=2">link</a></div>',
  'for i in $(seq 1 10); do echo "$i" | tee -a /tmp/log.txt; done',
  'SELECT id, name FROM users WHERE created_at >= \'2024-01-01\' ORDER BY id DESC;',
  'fn main() { let v: Vec<u32> = (0..10).collect(); println!("{:?}", v); }',
  '#include <stdio.h>\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n',
  '    x += 1;\r\n    y -= 2;\r\n\t\tz *= 3;\r\n',
  'if (a != b && c <= d || e >= f) { return !g; } else { throw new Error("x"); }',
  'matrix = [[1.0, 2.5e-3], [-3.14159, 0x1F]]  # numpy-ish',
  '    \n    \n        indented_block()\n',
];

const spaces = [
  ' ', '  ', '    ', '\t', '\t\t', '\n', '\n\n', '\r\n', '\r', ' \n ', '\u0085', '\ufeff',
  '\u00a0', '\u3000', '\u2028', '\u2029', '\u180e', '\u1680', '\u2002', '\u2003', '\u2009',
  '\u200a', '\u202f', '\u205f', '\u200b', '\u200d', '\u000b', '\u000c', '\u001c', '\u001f',
];

const digits = [
  () => String(int(10 ** (1 + int(15)))),
  () => repeat(1 + int(40), () => String(int(10))),
  () => `${int(1000)}.${int(1000)}`,
  () => `${int(100)},${String(int(1000)).padStart(3, '0')},${String(int(1000)).padStart(3, '0')}`,
  () => `+1 (${int(900) + 100}) ${int(900) + 100}-${int(9000) + 1000}`,
  () => repeat(1 + int(8), () => pick(['٠', '١', '٢', '٣', '٤', '٥', '٦', '٧', '٨', '٩'])),
  () => repeat(1 + int(8), () => pick(['०', '१', '२', '३', '४', '५', '६', '७', '८', '९'])),
  () => repeat(1 + int(8), () => pick(['０', '１', '２', '３', '４', '５', '６', '７', '８', '９'])),
  () => pick(['²', '³', '¹', '½', '¾', '⅓', 'Ⅻ', 'ⅷ', '①', '⑳', '〇', '二〇二四年']),
  () => `v${int(10)}.${int(30)}.${int(100)}-rc${int(5)}`,
];

const specials = [
  '<|begin_of_text|>', '<|end_of_text|>', '<|eot_id|>', '<|start_header_id|>', '<|end_header_id|>',
  '<|reserved_special_token_5|>', '<s>', '</s>', '<unk>', '<pad>', '<bos>', '<eos>', '<mask>',
  '<start_of_turn>', '<end_of_turn>', '<start_of_image>', '<|im_start|>', '<|im_end|>',
  '<|endoftext|>', '<think>', '</think>', '<tool_call>', '<|fim_prefix|>', '<0x41>', '<0xE2>',
  '<|im_sta', '<s', '< s>', '<|begin_of_text', '<<s>>', '<|im_start|><|im_end|>',
  '[INST]', '[/INST]', '<<SYS>>', '\n\n\n\n', '\t\t\t', '<b>', '<table>', '<h1>',
];

const combining = [
  () => 'e\u0301', () => 'a\u0300\u0316', () => 'n\u0303', () => 'o\u0308\u0304',
  () => 'Z' + repeat(1 + int(12), () => String.fromCharCode(0x300 + int(0x70))),
  () => '\u1100\u1161\u11a8', // Hangul jamo that NFC composes
  () => '\u0915\u093c', // Devanagari ka + nukta
  () => 'Vie\u0302\u0323t Nam', () => '\u0301starts with a mark',
  () => 'ﬁ ﬂ ﬃ ㍿ ℌ ℵ Ⅸ ｆｕｌｌ ㈱ ¼ ™ Å Ω K', // NFKC-sensitive
  () => 'ſ \'S \'ſ \'LL \'Ll K', // case folding of the contraction alternatives
];

const controls = ['\u0000', '\u0001', '\u0007', '\u001b[31m', '\u007f', '\u0080', '\u009f', '\ufffd', '\ufffc'];

function sentence() {
  const text = languages[pick(languageNames)];
  const words = text.split(/(?<= )/u);
  const start = int(words.length);
  return words.slice(start, start + 1 + int(12)).join('');
}

function longWord() {
  switch (int(7)) {
    case 0: return repeat(50 + int(400), () => pick(['a', 'b', 'c', 'x', 'y', 'z']));
    case 1: return 'https://example.com/' + repeat(20 + int(200), () => pick([...'abcdefghij0123456789/-_?=&%.']));
    case 2: return repeat(40 + int(300), () => pick([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/']));
    case 3: return repeat(30 + int(200), () => pick([...'的是不了人我在有他这中大来上国个到说们为子和你地出道也时年']));
    case 4: return 'Pneumonoultramicroscopicsilicovolcanoconiosis'.repeat(1 + int(6));
    case 5: return repeat(20 + int(200), () => pick([...'กขคงจฉชซญดตถทนบปผพฟมยรลวสหอ่้๊๋ัิีึืุู']));
    default: return repeat(10 + int(60), () => pick(['-', '=', '*', '#', '_', '.', '!', '?', '~']));
  }
}

const fragments = [
  sentence, sentence, sentence,
  () => pick(emoji),
  () => repeat(1 + int(6), () => pick(emoji)),
  () => pick(code),
  () => repeat(1 + int(6), () => pick(spaces)),
  () => pick(digits)(),
  () => pick(specials),
  longWord,
  () => pick(combining)(),
  () => pick(controls),
];

function mix(n) {
  let out = '';
  for (let i = 0; i < n; ++i) {
    out += pick(fragments)();
    if (random() < 0.6) out += pick([' ', ' ', ' ', '', '\n', '\t', '  ', pick(spaces)]);
  }
  return out;
}

// Fixed cases first (each language whole, every special token alone and in
// context, edge cases), then random strings of each kind and mixes.
const corpus = ['', ' ', '  ', '\n', 'a', 'A', '0', '\u0085', '\ufeff', '\u00a0', '\u3000', '\u180e'];
for (const name of languageNames) corpus.push(languages[name]);
for (const s of specials) corpus.push(s, `Hello ${s} world`, `x${s}y`, ` ${s} `);
for (const s of spaces) corpus.push(`a${s}b`, `${s}${s}${s}word`, `word${s}`, `1${s}${s}2`);
for (const c of code) corpus.push(c);
for (const e of emoji) corpus.push(e, `I ${e} it`);
while (corpus.length < count) {
  switch (int(10)) {
    case 0: corpus.push(sentence()); break;
    case 1: corpus.push(longWord()); break;
    case 2: corpus.push(pick(digits)() + pick(['', ' ', ', ', '\n']) + pick(digits)()); break;
    case 3: corpus.push(repeat(1 + int(4), () => pick(spaces)) + sentence() + repeat(int(4), () => pick(spaces))); break;
    case 4: corpus.push(sentence() + pick(specials) + sentence()); break;
    case 5: corpus.push(pick(combining)() + ' ' + sentence()); break;
    default: corpus.push(mix(1 + int(8)));
  }
}
let lines = corpus.slice(0, count);
if (sample > 0 && sample < lines.length) {
  lines = Array.from({ length: sample }, (_, i) => lines[Math.floor((i * lines.length) / sample)]);
}
if (args.includes('--records')) {
  const parts = [];
  for (const s of lines) {
    const bytes = Buffer.from(s, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    parts.push(length, bytes);
  }
  process.stdout.write(Buffer.concat(parts));
} else {
  process.stdout.write(lines.map((s) => JSON.stringify(s)).join('\n') + '\n');
}
