package main

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// The other infra tests synthesize with stand-in binaries (AssetsDir);
// this one builds the functions as `cdk synth` does, three times: twice
// from one clean copy of the checkout and once from a copy at another path.
// The first synthesis of a machine compiles both functions for arm64 from
// scratch (about a minute on 2 cores); later ones relink from Go's build
// cache (a second or two per function).
//
// The copies share the build cache: with -trimpath the checkout's path is
// not part of Go's cache keys, so the second copy's build is the same one.
// GEOLOCATE_ASSETS_COLD_CACHE=1 builds the second copy with an empty cache
// instead, proving the compiler's output itself reproducible (slow).
func TestFunctionAssetsBuiltDuringSynth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both functions for linux/arm64 (a cold build takes minutes)")
	}
	root, err := findModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	checkoutA := filepath.Join(tmp, "a", "geolocate")
	checkoutB := filepath.Join(tmp, "b", "elsewhere", "another-name")
	copyCheckout(t, root, checkoutA)
	copyCheckout(t, root, checkoutB)

	var first, again, moved *bundledSynth

	t.Run("clean checkout", func(t *testing.T) {
		// A fresh clone has no build output: `make build` has not run.
		for _, dir := range []string{"build", "cdk.out"} {
			if _, err := os.Stat(filepath.Join(checkoutA, dir)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the clean checkout has %s/ (%v)", dir, err)
			}
		}
		first = synthBundled(t, checkoutA, filepath.Join(tmp, "out-a-1"))
		seen := map[string]string{}
		for _, fn := range functionAssetDirs {
			checkLambdaBinary(t, fn, first.binaries[fn])
			if other, ok := seen[first.codeKeys[fn]]; ok {
				t.Errorf("%s and %s deploy the same asset %s", other, fn, first.codeKeys[fn])
			}
			seen[first.codeKeys[fn]] = fn
		}
	})
	if first == nil {
		t.FailNow()
	}

	t.Run("two synths in a row", func(t *testing.T) {
		again = synthBundled(t, checkoutA, filepath.Join(tmp, "out-a-2"))
		compareSynths(t, first, again)
	})

	t.Run("another checkout path", func(t *testing.T) {
		if os.Getenv("GEOLOCATE_ASSETS_COLD_CACHE") != "" {
			t.Setenv("GOCACHE", filepath.Join(tmp, "gocache"))
		}
		moved = synthBundled(t, checkoutB, filepath.Join(tmp, "out-b"))
		compareSynths(t, first, moved)
	})
}

// bundledSynth is a synthesis whose functions were built from sources.
type bundledSynth struct {
	outDir   string
	template map[string]any
	// manifest is the stack's assets manifest (<stack>.assets.json).
	manifest map[string]any
	// codeKeys and binaries are each function's S3 key and the path of its
	// bundled bootstrap, by function (predictor, monitor, mapwidget).
	codeKeys map[string]string
	binaries map[string]string
}

// synthBundled synthesizes the default configuration with the functions
// built from sourceDir, into outDir.
func synthBundled(t *testing.T, sourceDir, outDir string) *bundledSynth {
	t.Helper()
	flags := cdkJSONContext(t)
	cfg, err := LoadConfig(lookupIn(defaultContext(t)))
	if err != nil {
		t.Fatal(err)
	}
	var stack awscdk.Stack
	start := time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("synthesize from %s: panic: %v", sourceDir, r)
			}
		}()
		app := awscdk.NewApp(&awscdk.AppProps{Context: &flags, Outdir: jsii.String(outDir)})
		stack = NewGeolocationStack(app, cfg.StackName, &GeolocationStackProps{Config: cfg, SourceDir: sourceDir})
		app.Synth(nil)
	}()
	t.Logf("synthesized from %s in %v", sourceDir, time.Since(start).Round(time.Millisecond))

	s := &bundledSynth{outDir: outDir, codeKeys: map[string]string{}, binaries: map[string]string{}}
	readJSON(t, filepath.Join(outDir, *stack.ArtifactId()+".template.json"), &s.template)
	readJSON(t, filepath.Join(outDir, *stack.ArtifactId()+".assets.json"), &s.manifest)
	files, _ := s.manifest["files"].(map[string]any)

	resources, _ := s.template["Resources"].(map[string]any)
	for fn, prefix := range map[string]string{predictorAssetDir: "Predictor", monitorAssetDir: "Monitor", mapWidgetAssetDir: "MapWidget", resultEventsAssetDir: "ResultEventsEnrichment", jobFeederAssetDir: "JobFeeder"} {
		var ids []string
		for id, r := range resources {
			res := r.(map[string]any)
			if res["Type"] == "AWS::Lambda::Function" && strings.HasPrefix(id, prefix) {
				ids = append(ids, id)
			}
		}
		if len(ids) != 1 {
			t.Fatalf("want one %s function, found %v", prefix, ids)
		}
		props := resources[ids[0]].(map[string]any)["Properties"].(map[string]any)
		key, _ := props["Code"].(map[string]any)["S3Key"].(string)
		hash, ok := strings.CutSuffix(key, ".zip")
		if !ok {
			t.Fatalf("%s code is not a zipped asset: %v", fn, props["Code"])
		}
		entry, _ := files[hash].(map[string]any)
		source, _ := entry["source"].(map[string]any)
		path, _ := source["path"].(string)
		if path == "" || source["packaging"] != "zip" {
			t.Fatalf("%s: asset %s is not a zipped directory in the manifest: %v", fn, hash, entry)
		}
		dir := filepath.Join(outDir, path)
		listing, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(listing) != 1 || listing[0].Name() != bootstrapName {
			t.Fatalf("%s: asset directory %s holds %v, want only %s", fn, dir, listing, bootstrapName)
		}
		s.codeKeys[fn] = key
		s.binaries[fn] = filepath.Join(dir, bootstrapName)
	}
	return s
}

// compareSynths fails unless b deploys exactly what a does: the same
// template, the same assets manifest (asset hashes and object keys) and
// byte-identical function binaries.
func compareSynths(t *testing.T, a, b *bundledSynth) {
	t.Helper()
	for _, fn := range functionAssetDirs {
		if a.codeKeys[fn] != b.codeKeys[fn] {
			t.Errorf("%s asset: %s, then %s", fn, a.codeKeys[fn], b.codeKeys[fn])
		}
		if ha, hb := fileSHA256(t, a.binaries[fn]), fileSHA256(t, b.binaries[fn]); ha != hb {
			t.Errorf("%s bootstrap sha256: %s, then %s", fn, ha, hb)
		} else {
			t.Logf("%s: asset %s, bootstrap sha256 %s", fn, a.codeKeys[fn], ha)
		}
	}
	if !reflect.DeepEqual(a.manifest, b.manifest) {
		t.Errorf("assets manifests differ:\n%s\n%s", asJSON(a.manifest), asJSON(b.manifest))
	}
	if !reflect.DeepEqual(a.template, b.template) {
		ra, _ := a.template["Resources"].(map[string]any)
		rb, _ := b.template["Resources"].(map[string]any)
		var differ []string
		for id := range ra {
			if !reflect.DeepEqual(ra[id], rb[id]) {
				differ = append(differ, id)
			}
		}
		sort.Strings(differ)
		t.Errorf("templates differ (resources %v)", differ)
	}
}

// checkLambdaBinary checks that the binary at path is the function fn built
// for provided.al2023 on arm64 as assets.go says: static, stripped, with
// the pinned flags and without the checkout's path or Git state.
func checkLambdaBinary(t *testing.T, fn, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 || f.Class != elf.ELFCLASS64 {
		t.Errorf("%s: built for %v %v, want linux/arm64", fn, f.Machine, f.Class)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s: dynamically linked (has an interpreter)", fn)
		}
	}
	for _, name := range []string{".symtab", ".debug_info", ".zdebug_info"} {
		if f.Section(name) != nil {
			t.Errorf("%s: not stripped (has %s)", fn, name)
		}
	}
	if f.Section(".note.go.buildid") != nil {
		t.Errorf("%s: has a Go build id", fn)
	}

	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	if want := modulePath + "/functions/" + fn; info.Path != want {
		t.Errorf("%s: main package %s, want %s", fn, info.Path, want)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
		if strings.HasPrefix(s.Key, "vcs") {
			t.Errorf("%s: VCS state stamped: %s=%s", fn, s.Key, s.Value)
		}
	}
	// With -trimpath Go does not record -ldflags; the ELF checks above and
	// below cover -s -w -buildid=.
	for key, want := range map[string]string{
		"GOOS": "linux", "GOARCH": "arm64", "GOARM64": "v8.0", "CGO_ENABLED": "0",
		"-trimpath": "true", "-tags": "lambda.norpc",
	} {
		if settings[key] != want {
			t.Errorf("%s: build setting %s = %q, want %q", fn, key, settings[key], want)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if root, _ := findModuleRoot(); root != "" && bytes.Contains(raw, []byte(root)) {
		t.Errorf("%s: the binary contains the checkout path %s", fn, root)
	}
}

// copyCheckout copies what a clone of the repository at root would hold
// (tracked files and untracked ones git does not ignore, as they are in the
// working tree) to dst: no build output, no node_modules, no cdk.out.
func copyCheckout(t *testing.T, root, dst string) {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("list the checkout's files with git: %v", err)
	}
	copied := 0
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" {
			continue
		}
		src, target := filepath.Join(root, rel), filepath.Join(dst, rel)
		info, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case info.Mode().Type() == fs.ModeSymlink:
			link, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			err = os.Symlink(link, target)
			if err != nil {
				t.Fatal(err)
			}
		case info.Mode().IsRegular():
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		default:
			continue // a submodule or other special entry
		}
		copied++
	}
	if _, err := os.Stat(filepath.Join(dst, "go.mod")); err != nil {
		t.Fatalf("copied %d files of %s, but no go.mod: %v", copied, root, err)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Without Go the bundler stops the synthesis with what to do, and never
// answers false, which would make CDK try Docker.
func TestGoBundlerFailsWithoutGo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	out := t.TempDir()
	var recovered any
	var result *bool
	func() {
		defer func() { recovered = recover() }()
		result = (&goBundler{sourceDir: ".", pkg: functionPackage(predictorAssetDir)}).TryBundle(jsii.String(out), nil)
	}()
	if recovered == nil {
		t.Fatalf("TryBundle returned %v without Go on PATH, want a failure", result)
	}
	msg := fmt.Sprint(recovered)
	for _, want := range []string{"Go toolchain", "`go` is not on PATH", "install Go"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure %q does not say %q", msg, want)
		}
	}
	if _, err := lookGo(); err == nil {
		t.Error("lookGo found go on an empty PATH")
	}
}

// A failed build stops the synthesis with the compiler's output.
func TestGoBundlerReportsBuildErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module "+modulePath+"\n\ngo 1.22\n")
	write("functions/broken/main.go", "package main\n\nfunc main() { undefinedCall() }\n")
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		(&goBundler{sourceDir: dir, pkg: functionPackage("broken")}).TryBundle(jsii.String(t.TempDir()), nil)
	}()
	msg := fmt.Sprint(recovered)
	if recovered == nil || !strings.Contains(msg, "undefinedCall") || !strings.Contains(msg, "./functions/broken") {
		t.Fatalf("failure = %q, want the package and the compiler's error", msg)
	}
}

// The app builds the module it is run in, from its root or below.
func TestFindModuleRoot(t *testing.T) {
	root, err := findModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "functions", predictorAssetDir)); err != nil {
		t.Errorf("module root %s has no functions/%s: %v", root, predictorAssetDir, err)
	}

	// A nested module of another path is skipped.
	dir := t.TempDir()
	nested := filepath.Join(dir, "tools", "other")
	if err := os.MkdirAll(filepath.Join(nested, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("// c\nmodule "+modulePath+" // x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nested, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(nested, "sub"))
	got, err := findModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(dir); got != dir && got != want {
		t.Errorf("findModuleRoot() = %s, want %s", got, dir)
	}
}
