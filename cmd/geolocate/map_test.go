package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

func readPage(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no page: %v", err)
	}
	return string(b)
}

func assertNoFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s was written (%v), though the command failed", path, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestResultsMap(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	seedRecords(t, ledger.New(client, table))
	useAWS(t, &awsClients{tables: client, stacks: fakeStacks{name: "Geo", outputs: map[string]string{outputTableName: table}}})

	t.Run("every status: the two with a position on the map", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "map.html")
		r := runCLI(t, nil, nil, "results", "--table", table, "--map", path)
		if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "map       "+path+" (2 point(s) on the map; 2 without a position)") {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		page := readPage(t, path)
		for _, want := range []string{`data-points="2"`, "paris.jpg", "dir/nairobi café.jpg", "12.5 km", "4 record(s), every status, updated since",
			"2 record(s) without a position", "<h1>Predictions in " + table + "</h1>"} {
			if !strings.Contains(page, want) {
				t.Errorf("page lacks %q", want)
			}
		}
	})
	t.Run("a prefix, coloured by model", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "map.html")
		r := runCLI(t, nil, nil, "results", "--table", table, "--prefix", "dir/", "--map", path, "--map-color", "model")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		page := readPage(t, path)
		if !strings.Contains(page, `data-points="1"`) || !strings.Contains(page, "accuracy-v1 (1)") || strings.Contains(page, "paris.jpg") ||
			!strings.Contains(page, `keys starting \"dir/\"`) && !strings.Contains(page, "keys starting &#34;dir/&#34;") {
			t.Errorf("page for the prefix dir/:\n%.1500s", page)
		}
	})
	t.Run("the prefix filters the table too", func(t *testing.T) {
		r := runCLI(t, nil, nil, "results", "--table", table, "--prefix", "dir/")
		if r.code != 0 || !strings.Contains(r.stdout, "nairobi") || strings.Contains(r.stdout, "paris.jpg") {
			t.Errorf("exit %d:\n%s", r.code, r.stdout)
		}
	})
	for name, args := range map[string][]string{
		"with --json":       {"--json"},
		"with --geojson":    {"--geojson"},
		"a bad colour":      {"--map-color", "rainbow"},
		"an unknown stack":  {"--stack", "Nope"},
		"an unknown status": {"--status", "lost"},
	} {
		t.Run("no file when the command fails: "+name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "map.html")
			if !strings.Contains(strings.Join(args, " "), "--stack") {
				args = append(args, "--table", table)
			}
			r := runCLI(t, nil, nil, append([]string{"results", "--map", path}, args...)...)
			if r.code == 0 {
				t.Fatalf("exit 0 for %v", args)
			}
			assertNoFile(t, path)
		})
	}
}

// customDashboardTemplate is the miniature stack template with the map's
// custom widget, as infra writes it.
const customDashboardTemplate = `{"Resources":{
 "Board":{"Type":"AWS::CloudWatch::Dashboard","Properties":{"DashboardBody":{"Fn::Join":["",[
  "{\"widgets\":[{\"type\":\"custom\",\"x\":0,\"y\":0,\"width\":24,\"height\":12,\"properties\":{\"endpoint\":\"",
  {"Fn::GetAtt":["MapWidget","Arn"]},
  "\",\"params\":{\"colorBy\":\"status\"},\"title\":\"Where the photos are\"}}]}"]]}}}
}}`

// TestLocalMap runs the pipeline on one photo and writes both pages: the
// --map page and the dashboard, whose custom widget is the map drawn by the
// widget's handler from the run's records.
func TestLocalMap(t *testing.T) {
	dir := t.TempDir()
	images := filepath.Join(dir, "images")
	if err := os.Mkdir(images, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(imgJPEG)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(images, "photo.jpg"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	template := filepath.Join(dir, "stack.template.json")
	if err := os.WriteFile(template, []byte(customDashboardTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	mapPath, dashPath := filepath.Join(dir, "map.html"), filepath.Join(dir, "dashboard.html")
	r := runCLI(t, map[string]string{}, nil, "local", "--images", images, "--map", mapPath, "--dashboard", dashPath, "--template", template)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	page := readPage(t, mapPath)
	if !strings.Contains(page, `data-points="1"`) || !strings.Contains(page, "photo.jpg") || !strings.Contains(page, "geolocate local: 1 upload(s)") {
		t.Errorf("map page:\n%.1200s", page)
	}
	if !strings.Contains(r.stderr, "map       "+mapPath+" (1 point(s) on the map)") {
		t.Errorf("stderr does not name the map:\n%s", r.stderr)
	}
	dash := readPage(t, dashPath)
	if !strings.Contains(dash, `data-widget-type="custom"`) || !strings.Contains(dash, `<svg style=`) || !strings.Contains(dash, `data-points="1"`) {
		t.Errorf("the dashboard's map widget is not drawn from the run:\n%.2000s", dash)
	}
}

func TestLocalMapNotWrittenOnFailure(t *testing.T) {
	for name, args := range map[string][]string{
		"with --serve":     {"--serve"},
		"no such folder":   {"--images", "/nonexistent/photos"},
		"a bad map colour": {"--map-color", "rainbow"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "map.html")
			r := runCLI(t, map[string]string{}, nil, append([]string{"local", "--map", path}, args...)...)
			if r.code == 0 {
				t.Fatalf("exit 0")
			}
			assertNoFile(t, path)
		})
	}
}
