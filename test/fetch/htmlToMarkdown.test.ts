import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { CONVERTER_LIMITS, htmlToMarkdown } from "../../src/fetch/html/htmlToMarkdown"
import { htmlToPlainText } from "../../src/fetch/html/plainText"
import { scanHtml } from "../../src/fetch/html/scanHtml"
import { decodeBody } from "../../src/tools/builtin/fetchUrl/pageText"

const base = new URL("https://example.com/docs/page")

/** Wall-clock budget for hostile inputs: generous for a loaded CI core, far below quadratic blow-ups. */
const timed = <A>(run: () => A): { readonly value: A; readonly ms: number } => {
  const started = performance.now()
  const value = run()
  return { value, ms: performance.now() - started }
}

describe("htmlToMarkdown", () => {
  it("[103] headings, emphasis, links, lists, code, tables and quotes; script/style/noscript/template dropped", () => {
    const html = `<!doctype html><html><head><title>Doc</title><style>p{}</style><script>SCRIPT()</script></head><body>
      <nav>menu</nav><main><h1>Title</h1><p>Some <strong>bold</strong>, <em>em</em> and <a href="/x?y=1">a link</a>.</p>
      <h2>Steps</h2><ol><li>first</li><li>second<ul><li>nested</li></ul></li></ol>
      <pre><code class="language-ts">const a = 1\nconst b = 2</code></pre>
      <table><tr><th>k</th><th>v</th></tr><tr><td>a|b</td><td>2</td></tr></table>
      <blockquote>quoted</blockquote><noscript>NOSCRIPT</noscript><template>TEMPLATE</template></main></body></html>`
    const { mode, text, title } = htmlToMarkdown(html, { baseUrl: base })
    assert.strictEqual(mode, "markdown")
    assert.strictEqual(title, "Doc")
    assert.strictEqual(
      text,
      [
        "# Title",
        "",
        "Some **bold**, *em* and [a link](https://example.com/x?y=1).",
        "",
        "## Steps",
        "",
        "1. first",
        "2. second",
        "   - nested",
        "",
        "```ts",
        "const a = 1",
        "const b = 2",
        "```",
        "",
        "| k | v |",
        "| --- | --- |",
        "| a\\|b | 2 |",
        "",
        "> quoted"
      ].join("\n")
    )
  })

  it("prefers <main>/<article> and drops site chrome when falling back to <body>", () => {
    const article = htmlToMarkdown(
      `<html><body><header>SITE</header><article><h1>Story</h1><p>${"word ".repeat(60)}</p></article><aside>ADS</aside></body></html>`
    )
    assert.include(article.text, "# Story")
    assert.notInclude(article.text, "SITE")
    assert.notInclude(article.text, "ADS")
    const body = htmlToMarkdown(`<html><body><header>SITE</header><div><p>content</p></div><footer>FOOT</footer></body></html>`)
    assert.strictEqual(body.text, "content")
  })

  it("hostile nesting goes to the linear plain-text pass instead of overflowing the stack", () => {
    for (const [name, html] of [
      ["100k nested divs", `<body>${"<div>".repeat(100_000)}deep text${"</div>".repeat(100_000)}</body>`],
      ["5k nested lists", `<body>${"<ul><li>x".repeat(5_000)}</body>`],
      ["100k unclosed inline tags", `<body>${"<b><i>".repeat(100_000)}end</body>`],
      ["100k self-closed divs", `<body>${"<div/>".repeat(100_000)}tail</body>`]
    ] as const) {
      const { ms, value } = timed(() => htmlToMarkdown(html))
      assert.strictEqual(value.mode, "plain-text", name)
      assert.include(value.fallbackReason ?? "", "nested deeper", name)
      assert.isBelow(ms, 3_000, name)
    }
    const shallow = htmlToMarkdown(`<body>${"<div>".repeat(200)}<p>inside</p>${"</div>".repeat(200)}</body>`)
    assert.strictEqual(shallow.mode, "markdown")
    assert.strictEqual(shallow.text, "inside")
  })

  it("huge node counts, entity floods and stray '<' stay linear", () => {
    for (const [name, html] of [
      ["1M entities", `<p>${"&lt;".repeat(1_000_000)}</p>`],
      ["1M stray <", "<".repeat(1_000_000)],
      ["300k siblings", `<body>${"<span></span>".repeat(300_000)}</body>`]
    ] as const) {
      const { ms, value } = timed(() => htmlToMarkdown(html))
      assert.strictEqual(value.mode, "plain-text", name)
      assert.isBelow(ms, 3_000, name)
    }
    assert.strictEqual(htmlToMarkdown(`<p>${"&lt;".repeat(10)}</p>`).text, "<".repeat(10))
  })

  it("a 2000-row table converts in linear time", () => {
    const rows = Array.from({ length: 2_000 }, (_, index) => `<tr><td>${index}</td><td>b</td><td>c</td><td>d</td></tr>`).join("")
    const { ms, value } = timed(() => htmlToMarkdown(`<table><tr><th>a</th><th>b</th><th>c</th><th>d</th></tr>${rows}</table>`))
    assert.strictEqual(value.mode, "markdown")
    assert.strictEqual(value.text.split("\n").length, 2_002)
    assert.isBelow(ms, 3_000)
  })

  it("output is capped", () => {
    const html = `<body>${"<p>paragraph text that repeats</p>".repeat(5_000)}</body>`
    const capped = htmlToMarkdown(html, { limits: { maxOutput: 10_000 } })
    assert.isTrue(capped.truncated)
    assert.strictEqual(capped.text.length, 10_000)
  })

  it("never throws and stays under the output cap on arbitrary input (property)", () => {
    const fragment = fc.oneof(
      fc.constantFrom("<div>", "</div>", "<p>", "<ul><li>", "</li></ul>", "<table><tr><td>", "</td></tr></table>", "<pre>", "</pre>", "<a href='/x'>", "</a>", "<b>", "</b>", "<!--", "-->", "<script>", "</script>", "&amp;", "&#x41;", "<", ">", "<br>", "<h2>", "</h2>", "<code>", "`"),
      fc.string({ maxLength: 12 })
    )
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 200 }), (parts) => {
        const result = htmlToMarkdown(parts.join(""), { baseUrl: base, limits: { maxOutput: 5_000 } })
        return result.text.length <= 5_000 && typeof result.text === "string"
      }),
      { numRuns: 300 }
    )
  })

  it("scanHtml skips comments and raw text and counts references", () => {
    assert.deepStrictEqual(scanHtml("<div><!-- <div><div> --><script>'<div>'</script>&amp;&lt;</div>"), {
      elements: 2,
      references: 2,
      maxDepth: 1
    })
    assert.strictEqual(scanHtml("<svg><path/><path/><path/></svg>").maxDepth, 1)
    assert.strictEqual(scanHtml("<ul><li>a<li>b<li>c</ul>").maxDepth, 1)
    assert.isAbove(CONVERTER_LIMITS.maxDepth, 100)
  })

  it("the plain-text pass keeps block boundaries and drops scripts", () => {
    assert.strictEqual(
      htmlToPlainText("<h1>T</h1><p>a &amp; b</p><script>x<y</script><ul><li>one<li>two</ul><p>1 < 2</p>", 1_000),
      "T\n\na & b\n\n- one\n- two\n\n1 < 2"
    )
  })

  it("bodies decode with the declared charset (header, then <meta>), UTF-8 otherwise", () => {
    const latin1 = Uint8Array.from([0x63, 0x61, 0x66, 0xe9])
    assert.strictEqual(decodeBody(latin1, "text/plain; charset=iso-8859-1"), "café")
    const meta = new Uint8Array([...Buffer.from('<meta charset="windows-1252"><p>'), 0x80, ...Buffer.from("</p>")])
    assert.include(decodeBody(meta, "text/html"), "€")
    assert.strictEqual(decodeBody(Buffer.from("héllo"), "text/plain; charset=bogus-label"), "héllo")
  })
})
