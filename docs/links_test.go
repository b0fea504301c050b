// Package docs holds the guides the README links. Its test keeps them
// true to the repository: every relative link resolves to a file and, when
// it names one, a heading; every file name ending in .md that a guide
// quotes exists in the repository (issue 46: service-assumptions.md cited a
// contract file the repository never had).
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	quotedMD   = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.md)`")
	heading    = regexp.MustCompile(`(?m)^#{1,6} +(.+)$`)
	slugDrop   = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	fencedCode = regexp.MustCompile("(?s)```.*?```")
)

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces made hyphens.
func slug(h string) string {
	return strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
}

func guides(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, filepath.Join("..", "README.md"))
}

func anchors(t *testing.T, path string, cache map[string]map[string]bool) map[string]bool {
	t.Helper()
	if a, ok := cache[path]; ok {
		return a
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fencedCode.ReplaceAllString(string(b), ""), -1) {
		a[slug(m[1])] = true
	}
	cache[path] = a
	return a
}

func TestRelativeLinksResolve(t *testing.T) {
	cache := map[string]map[string]bool{}
	for _, g := range guides(t) {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		text := fencedCode.ReplaceAllString(string(b), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := g
			if file != "" {
				path = filepath.Join(filepath.Dir(g), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %q: no file %s", g, target, path)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path, cache)[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", g, target, path, anchor)
			}
		}
	}
}

func TestQuotedMarkdownFilesExist(t *testing.T) {
	names := map[string]bool{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "cdk.out") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".md") {
			names[filepath.Base(p)] = true
			names[filepath.ToSlash(strings.TrimPrefix(p, "../"))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guides(t) {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range quotedMD.FindAllStringSubmatch(string(b), -1) {
			if !names[m[1]] && !names[filepath.Base(m[1])] {
				t.Errorf("%s quotes %s, which is not in the repository", g, m[1])
			}
		}
	}
}
