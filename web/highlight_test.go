package web

import (
	"strings"
	"testing"
)

func TestTokenizeSQL(t *testing.T) {
	text := "SELECT a.x, 'it''s' AS s, E'a\\'b', 1.5e-3, \"Odd \"\"Name\"\" \" -- note\nFROM t /* c */ WHERE `b` <> 0.25 AND é > 2"
	toks := tokenizeSQL(text)
	var b strings.Builder
	got := map[tokenClass][]string{}
	for _, tk := range toks {
		b.WriteString(tk.text)
		if tk.class != tokSpace {
			got[tk.class] = append(got[tk.class], tk.text)
		}
	}
	if b.String() != text {
		t.Fatalf("tokens do not give the text back:\n%q\n%q", b.String(), text)
	}
	for class, want := range map[tokenClass][]string{
		tokKeyword: {"SELECT", "AS", "FROM", "WHERE", "AND"},
		tokString:  {"'it''s'", "E'a\\'b'"},
		tokNumber:  {"1.5e-3", "0.25", "2"},
		tokComment: {"-- note", "/* c */"},
		tokIdent:   {"a", "x", "s", `"Odd ""Name"" "`, "t", "`b`", "é"},
	} {
		if strings.Join(got[class], "|") != strings.Join(want, "|") {
			t.Errorf("%s tokens %q, want %q", class, got[class], want)
		}
	}
	// Positions count characters, as blocker positions do.
	for _, tk := range toks {
		if tk.text == "2" && tk.pos != len([]rune(text))-1 {
			t.Errorf("the last token is at %d, want %d", tk.pos, len([]rune(text))-1)
		}
	}
}

func TestHighlightSQL(t *testing.T) {
	text := "SELECT é, '<b>' FROM src WHERE x < 1"
	pos := strings.Index(text, "src") - len("é") + len("e") + 1 // 1-based, in characters
	h := string(highlightSQL(text, []sqlMark{{Pos: pos, Label: "1", Title: `CODE: "why" <here>`}}))
	for _, want := range []string{
		`<span class="kw">SELECT</span>`,
		`<span class="str">&#39;&lt;b&gt;&#39;</span>`,
		`<mark class="blocker" title="CODE: &#34;why&#34; &lt;here&gt;"><span class="id">src</span><sup>1</sup></mark>`,
		`<span class="op">&lt;</span>`,
		`<span class="num">1</span>`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("highlight lacks %s:\n%s", want, h)
		}
	}
	if strings.Contains(h, "<b>") {
		t.Fatalf("text reached the page unescaped:\n%s", h)
	}
}
