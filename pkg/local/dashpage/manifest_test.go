package dashpage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestWidgetsListsTypesAndTitlesInOrder(t *testing.T) {
	template, err := os.ReadFile(filepath.Join("testdata", "template.json"))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := Widgets(template)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) < 3 || ws[len(ws)-1] != (WidgetInfo{Type: "text"}) {
		t.Fatalf("widgets %+v: want the template's, ending with its untitled text widget", ws)
	}
	path := filepath.Join(t.TempDir(), "w.json")
	if err := WriteWidgets(path, template); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back []WidgetInfo
	if err := json.Unmarshal(raw, &back); err != nil || len(back) != len(ws) {
		t.Fatalf("written %s: %v, %d widgets of %d", raw, err, len(back), len(ws))
	}
	for i := range ws {
		if back[i] != ws[i] {
			t.Errorf("widget %d written as %+v, want %+v", i, back[i], ws[i])
		}
	}
}
