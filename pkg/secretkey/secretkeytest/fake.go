// Package secretkeytest provides a fake Secrets Manager for tests: the real
// secretkey provider (and the AWS secret cache inside it) runs on top of it,
// as it runs on Secrets Manager in the stack.
package secretkeytest

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// SecretsManager holds one secret whose AWSCURRENT version is the last value
// set, and counts the calls made to it. It satisfies
// secretkey.SecretsManagerAPI. RecordTo reports each call, as the SDK
// client's middleware would, so the calls of the code under test count
// with those of its real clients (pkg/local/awscalls).
//
// The package ships beside pkg/secretkey, so it must not import the local
// rig (functions/boundary_test.go): the report is a plain function, which
// the rig's recorder provides (awscalls.Recorder.AddSecretsManager).
type SecretsManager struct {
	mu       sync.Mutex
	id       string   // "" accepts any secret id
	versions []string // value of each version; the last is AWSCURRENT
	calls    int
	fail     error
	report   CallReporter
}

// CallReporter receives each call the fake answers: the SDK's operation
// name, the secret id asked for and whether the call failed (it was made
// all the same).
type CallReporter func(operation, secretID string, failed bool)

// New holds a secret named id ("" for any) whose first version is value.
func New(id, value string) *SecretsManager {
	return &SecretsManager{id: id, versions: []string{value}}
}

// RecordTo makes the fake report every call it answers to report, with the
// operation and secret id the SDK client would report, and returns the
// fake.
func (f *SecretsManager) RecordTo(report CallReporter) *SecretsManager {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.report = report
	return f
}

// Rotate stores a new current value, as an operator does after regenerating
// the key; cached readers keep the old one until they refresh.
func (f *SecretsManager) Rotate(value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.versions = append(f.versions, value)
}

// Values returns every value the secret has held, oldest first.
func (f *SecretsManager) Values() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.versions...)
}

// Calls counts DescribeSecret and GetSecretValue calls.
func (f *SecretsManager) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// FailWith makes every later call return err (nil restores service).
func (f *SecretsManager) FailWith(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

// check counts and records the call of operation op on secret id, and
// returns the error it fails with, if any. Every method calls it first.
func (f *SecretsManager) check(op string, id *string) (err error) {
	f.calls++
	if f.report != nil {
		defer func() { f.report(op, aws.ToString(id), err != nil) }()
	}
	if f.fail != nil {
		return f.fail
	}
	if f.id != "" && aws.ToString(id) != f.id {
		return fmt.Errorf("ResourceNotFoundException: %s", aws.ToString(id))
	}
	return nil
}

// DescribeSecret reports the versions and their stages.
func (f *SecretsManager) DescribeSecret(_ context.Context, in *secretsmanager.DescribeSecretInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.DescribeSecretOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("DescribeSecret", in.SecretId); err != nil {
		return nil, err
	}
	stages := map[string][]string{}
	for i := range f.versions {
		stages[fmt.Sprintf("v%d", i)] = []string{"AWSPREVIOUS"}
	}
	stages[fmt.Sprintf("v%d", len(f.versions)-1)] = []string{"AWSCURRENT"}
	return &secretsmanager.DescribeSecretOutput{Name: in.SecretId, VersionIdsToStages: stages}, nil
}

// GetSecretValue returns the value of the requested version.
func (f *SecretsManager) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("GetSecretValue", in.SecretId); err != nil {
		return nil, err
	}
	var i int
	if _, err := fmt.Sscanf(aws.ToString(in.VersionId), "v%d", &i); err != nil || i < 0 || i >= len(f.versions) {
		return nil, fmt.Errorf("ResourceNotFoundException: version %s", aws.ToString(in.VersionId))
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(f.versions[i]), VersionId: in.VersionId}, nil
}
