package dashpage

import (
	"html"
	"html/template"
	"regexp"
	"strings"
)

// The Markdown a dashboard's text widgets use: headings (#), bullet lists
// (- or *), paragraphs, **bold**, *italic*, `code` and [links](url).
var (
	mdCode   = regexp.MustCompile("`([^`]+)`")
	mdBold   = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	mdItalic = regexp.MustCompile(`\*([^*\s][^*]*)\*`)
	mdLink   = regexp.MustCompile(`\[([^\]]+)\]\((https?://[^)\s]+|[^):\s]+)\)`)
)

// markdownHTML renders CloudWatch text-widget Markdown as HTML, escaping
// everything first so that no text of the template becomes markup of its
// own; only the constructs above are turned into elements. A link's target
// is kept only when it is http(s) or relative, never javascript:.
func markdownHTML(md string) template.HTML {
	var b strings.Builder
	inList := false
	closeList := func() {
		if inList {
			b.WriteString("</ul>")
			inList = false
		}
	}
	for _, para := range strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n\n") {
		for _, ln := range strings.Split(para, "\n") {
			ln = strings.TrimSpace(ln)
			switch {
			case ln == "":
			case strings.HasPrefix(ln, "#"):
				closeList()
				level := min(len(ln)-len(strings.TrimLeft(ln, "#")), 4) + 2 // h3..h6 inside a widget
				tag := "h" + string(rune('0'+level))
				b.WriteString("<" + tag + ">" + inline(strings.TrimSpace(strings.TrimLeft(ln, "#"))) + "</" + tag + ">")
			case strings.HasPrefix(ln, "- ") || strings.HasPrefix(ln, "* "):
				if !inList {
					b.WriteString("<ul>")
					inList = true
				}
				b.WriteString("<li>" + inline(ln[2:]) + "</li>")
			default:
				closeList()
				b.WriteString("<p>" + inline(ln) + "</p>")
			}
		}
		closeList()
	}
	return template.HTML(b.String())
}

// inline renders one line's code, links, bold and italic, escaped first.
func inline(s string) string {
	var codes []string
	// Code spans first, kept aside so that nothing inside them is read as
	// Markdown.
	s = mdCode.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, "<code>"+html.EscapeString(mdCode.FindStringSubmatch(m)[1])+"</code>")
		return "\x00" + string(rune('a'+len(codes)-1)) + "\x00"
	})
	s = html.EscapeString(s)
	s = mdLink.ReplaceAllString(s, `<a href="$2">$1</a>`)
	s = mdBold.ReplaceAllString(s, "<b>$1</b>")
	s = mdItalic.ReplaceAllString(s, "<i>$1</i>")
	for i, c := range codes {
		s = strings.Replace(s, "\x00"+string(rune('a'+i))+"\x00", c, 1)
	}
	return s
}
