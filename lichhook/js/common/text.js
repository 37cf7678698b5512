// Cutting text bound for lich to a limit.

// `text` cut to at most `limit` UTF-16 units, never between the two halves of a surrogate
// pair (half a character becomes U+FFFD, or an error, once it is UTF-8).
export function clipped(text, limit) {
  if (text.length <= limit) return text;
  const code = text.charCodeAt(limit - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit);
}
