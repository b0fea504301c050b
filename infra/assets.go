package main

// Function code. Synthesis builds each Lambda function from the Go sources
// of this module with CDK asset bundling running locally on the host's Go
// toolchain (never Docker), so `cdk synth` and `cdk deploy` work on a fresh
// clone with nothing built beforehand.
//
// The asset hash is the OUTPUT hash: CDK fingerprints the bundled directory,
// which holds only the bootstrap binary. The build is reproducible (fixed
// target and flags, -trimpath, no VCS stamp, no build id), so those bytes are
// a function of exactly what goes into the binary: the sources of the
// packages it imports, the dependency versions go.mod and go.sum pin, the
// build flags and the Go version (recorded in the binary's build info). That
// makes the hash
//   - content based: the same in every synth and in every checkout path, so a
//     no-op `cdk diff` shows no change;
//   - per function: editing the monitor does not redeploy the predictor, and
//     editing docs, tests, test data or the CDK code redeploys neither;
//   - safe: it cannot miss an input, unlike a hash over a hand-kept list of
//     sources or exclude patterns, where a missed input deploys new code
//     under an old hash (S3 already has that key, so nothing is uploaded). A
//     build input that is not reproducible shows up instead as a spurious
//     change, which TestFunctionAssetsBuiltDuringSynth guards against.
// The price is a `go build` per function on every synth; with Go's build
// cache warm that is a relink of a second or two each.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/jsii-runtime-go"
)

// modulePath is the module the functions are built from.
const modulePath = "github.com/geolocate-aws/geolocate"

// bootstrapName is the executable provided.al2023 runs.
const bootstrapName = "bootstrap"

// functionPackage is the main package of the function fn, relative to the
// module root.
func functionPackage(fn string) string { return "./functions/" + fn }

// lambdaBuildFlags are the `go build` flags of a function binary:
// lambda.norpc drops the RPC mode only the go1.x runtime used; -trimpath
// and -buildvcs=false keep the checkout's path and Git state out of the
// binary; -s -w strip the symbol table and DWARF; -buildid= leaves out the
// build id, a hash of the build's inputs nothing reads at run time.
var lambdaBuildFlags = []string{
	"-trimpath",
	"-buildvcs=false",
	"-tags", "lambda.norpc",
	"-ldflags", "-s -w -buildid=",
}

// lambdaBuildEnv pins the build environment on top of the caller's: the
// target (provided.al2023 on arm64, Graviton2's baseline ISA), a static
// binary, no GOFLAGS from the shell, and no go.work from a parent directory
// swapping in other module versions. GOTOOLCHAIN, GOEXPERIMENT and GOFIPS140
// follow the host; they are recorded in the binary, so changing them
// changes the asset.
var lambdaBuildEnv = []string{
	"GOOS=linux",
	"GOARCH=arm64",
	"GOARM64=v8.0",
	"CGO_ENABLED=0",
	"GOFLAGS=",
	"GOWORK=off",
}

// bundlingImage fills BundlingOptions.Image, which the type requires. It is
// never pulled or run: goBundler builds locally and reports success, or
// stops the synthesis.
const bundlingImage = "local-go-build.invalid/docker-is-never-used"

// functionAssets says where the functions' code comes from: built from the
// module at sourceDir, or, when prebuiltDir is set, taken as it is from
// prebuiltDir/<fn>/ (tests, with stand-in binaries).
type functionAssets struct {
	sourceDir   string
	prebuiltDir string
}

// newFunctionAssets reads the asset settings of props. Without SourceDir or
// AssetsDir the module containing the working directory is built: the CDK
// CLI runs the app from the project root.
func newFunctionAssets(props *GeolocationStackProps) functionAssets {
	if props.AssetsDir != "" {
		return functionAssets{prebuiltDir: props.AssetsDir}
	}
	if props.SourceDir != "" {
		return functionAssets{sourceDir: props.SourceDir}
	}
	root, err := findModuleRoot()
	if err != nil {
		panic(err.Error())
	}
	return functionAssets{sourceDir: root}
}

// code is the Lambda code of the function fn.
func (a functionAssets) code(fn string) awslambda.Code {
	if a.prebuiltDir != "" {
		return awslambda.Code_FromAsset(jsii.String(filepath.Join(a.prebuiltDir, fn)), nil)
	}
	// The asset's source is the module root, which CDK neither copies nor
	// fingerprints with the OUTPUT hash: local bundling reads it in place.
	bundler := &goBundler{sourceDir: a.sourceDir, pkg: functionPackage(fn)}
	return awslambda.Code_FromAsset(jsii.String(a.sourceDir), &awss3assets.AssetOptions{
		AssetHashType: awscdk.AssetHashType_OUTPUT,
		Bundling: &awscdk.BundlingOptions{
			Image: awscdk.DockerImage_FromRegistry(jsii.String(bundlingImage)),
			Local: bundler,
			// Command and Environment document the build; goBundler runs
			// it, not Docker. They also tell the two functions apart: CDK
			// stages an asset once per process under a key over these
			// options, in which the Go bundler serializes to nothing, so
			// without them the monitor would get the predictor's binary.
			Command:     jsii.Strings(append([]string{"go"}, bundler.args(bootstrapName)...)...),
			Environment: buildEnvMap(),
			OutputType:  awscdk.BundlingOutput_NOT_ARCHIVED,
		},
	})
}

// buildEnvMap is lambdaBuildEnv as bundling environment.
func buildEnvMap() *map[string]*string {
	env := map[string]*string{}
	for _, kv := range lambdaBuildEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = jsii.String(v)
	}
	return &env
}

// goBundler builds one function: CDK calls TryBundle (through jsii) with
// the directory the asset is to be written to.
type goBundler struct {
	sourceDir string // module root
	pkg       string // main package, relative to sourceDir
}

// TryBundle implements awscdk.ILocalBundling. It never returns false: that
// would make CDK fall back to Docker. A failed build stops the synthesis
// with the reason.
func (b *goBundler) TryBundle(outputDir *string, _ *awscdk.BundlingOptions) *bool {
	if err := b.build(filepath.Join(*outputDir, bootstrapName)); err != nil {
		panic(err.Error())
	}
	return jsii.Bool(true)
}

// args are the `go build` arguments writing the binary to out.
func (b *goBundler) args(out string) []string {
	args := append([]string{"build"}, lambdaBuildFlags...)
	return append(args, "-o", out, b.pkg)
}

// build writes the function's binary to out.
func (b *goBundler) build(out string) error {
	goTool, err := lookGo()
	if err != nil {
		return err
	}
	args := b.args(out)
	cmd := exec.Command(goTool, args...)
	cmd.Dir = b.sourceDir
	cmd.Env = append(os.Environ(), lambdaBuildEnv...)
	fmt.Fprintf(os.Stderr, "go build %s (%s)\n", b.pkg, strings.Join(lambdaBuildEnv[:2], " "))
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the Lambda function %s in %s failed: %s %s: %w\n%s",
			b.pkg, b.sourceDir, goTool, strings.Join(args, " "), err, bytes.TrimSpace(output))
	}
	return nil
}

// lookGo finds the Go toolchain the functions are built with.
func lookGo() (string, error) {
	path, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the Lambda functions are built during synthesis with the Go toolchain, "+
			"and `go` is not on PATH (%v): install Go (the version go.mod asks for, https://go.dev/dl/) "+
			"and run again; Docker is not used", err)
	}
	return path, nil
}

// findModuleRoot returns the root of this module, the nearest directory
// from the working directory up that holds its go.mod.
func findModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for start := dir; ; {
		if path, err := readModulePath(filepath.Join(dir, "go.mod")); err == nil && path == modulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s in %s or above: run the CDK app from the project's checkout", modulePath, start)
		}
		dir = parent
	}
}

// readModulePath returns the module path a go.mod declares.
func readModulePath(goMod string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line, _, _ := strings.Cut(scanner.Text(), "//")
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := scanner.Err(); err != nil {
		return "", err
	}
	return "", errors.New(goMod + " declares no module")
}
