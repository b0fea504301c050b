package soak

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// fakeSecretsManager holds one secret whose AWSCURRENT version is the last
// value set. It sits behind the real secretkey provider (and so the real
// AWS secret cache), as Secrets Manager does in the stack.
type fakeSecretsManager struct {
	mu       sync.Mutex
	versions []string // bare secret values; the last is AWSCURRENT
}

func (f *fakeSecretsManager) set(value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.versions = append(f.versions, value)
}

func (f *fakeSecretsManager) values() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.versions...)
}

func (f *fakeSecretsManager) DescribeSecret(_ context.Context, in *secretsmanager.DescribeSecretInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.DescribeSecretOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	stages := map[string][]string{}
	for i := range f.versions {
		stages[fmt.Sprintf("v%d", i)] = []string{"AWSPREVIOUS"}
	}
	stages[fmt.Sprintf("v%d", len(f.versions)-1)] = []string{"AWSCURRENT"}
	return &secretsmanager.DescribeSecretOutput{Name: in.SecretId, VersionIdsToStages: stages}, nil
}

func (f *fakeSecretsManager) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var i int
	if _, err := fmt.Sscanf(aws.ToString(in.VersionId), "v%d", &i); err != nil || i < 0 || i >= len(f.versions) {
		return nil, fmt.Errorf("ResourceNotFoundException: version %s", aws.ToString(in.VersionId))
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(f.versions[i]), VersionId: in.VersionId}, nil
}
