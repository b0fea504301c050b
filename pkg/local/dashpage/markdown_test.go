package dashpage

import "testing"

// Issue 46 point 16: the map's help text showed raw Markdown.
func TestMarkdownHTML(t *testing.T) {
	for _, c := range []struct{ md, want string }{
		{"**The map below is blank?** choose **Allow always** (or *Execute once*); needs `lambda:InvokeFunction`.",
			"<p><b>The map below is blank?</b> choose <b>Allow always</b> (or <i>Execute once</i>); needs <code>lambda:InvokeFunction</code>.</p>"},
		{"# Runbook\nSee [the README](https://example.com/r?a=1&b=2).", `<h3>Runbook</h3><p>See <a href="https://example.com/r?a=1&amp;b=2">the README</a>.</p>`},
		{"- one\n- `**two**`\n\nafter", "<ul><li>one</li><li><code>**two**</code></li></ul><p>after</p>"},
		{"<script>alert(1)</script> [x](javascript:alert(1))", "<p>&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(1))</p>"},
	} {
		if got := string(markdownHTML(c.md)); got != c.want {
			t.Errorf("markdownHTML(%q)\n = %s\nwant %s", c.md, got, c.want)
		}
	}
}

// Issue 46 point 16: "no local data for SEARCH('{Geolocation,Pipeline,Reason}
// ...')" showed the query; the note says in words why nothing is drawn.
func TestSearchNoteIsInWords(t *testing.T) {
	s, err := parseSearch(`SEARCH('{Geolocation,Pipeline,Reason} MetricName="ImagesFailed" Pipeline="Geo"', 'Sum', 300)`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := searchNote(s), "No ImagesFailed published in this run: a line appears for each Reason that gets one."; got != want {
		t.Errorf("searchNote = %q, want %q", got, want)
	}
}
