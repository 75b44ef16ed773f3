/** Named references common on real pages; the rest stay as written (the plain-text fallback only). */
const NAMED: Readonly<Record<string, string>> = {
  amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " ", copy: "©", reg: "®", trade: "™",
  hellip: "…", mdash: "—", ndash: "–", lsquo: "‘", rsquo: "’", ldquo: "“", rdquo: "”", laquo: "«",
  raquo: "»", middot: "·", bull: "•", deg: "°", times: "×", divide: "÷", euro: "€", pound: "£",
  yen: "¥", cent: "¢", sect: "§", para: "¶", shy: "", zwj: "", zwnj: "", ensp: " ", emsp: " ",
  thinsp: " ", larr: "←", rarr: "→", uarr: "↑", darr: "↓", plusmn: "±", frac12: "½", hearts: "♥"
}

const fromCodePoint = (code: number, fallback: string): string =>
  Number.isInteger(code) && code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
    ? String.fromCodePoint(code)
    : fallback

/** Decodes numeric and common named character references (linear: bounded pattern, no backtracking). */
export const decodeEntities = (text: string): string =>
  text.indexOf("&") === -1
    ? text
    : text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});/g, (whole, body: string) => {
        if (body.startsWith("#x") || body.startsWith("#X")) return fromCodePoint(parseInt(body.slice(2), 16), whole)
        if (body.startsWith("#")) return fromCodePoint(parseInt(body.slice(1), 10), whole)
        return NAMED[body] ?? NAMED[body.toLowerCase()] ?? whole
      })
