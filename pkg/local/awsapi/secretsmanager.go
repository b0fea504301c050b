package awsapi

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// SecretsManager serves GetSecretValue of the secrets added, over
// awsJson1_1: the stack's API key secret, which doctor and status read
// through the SecretArn output. The values live in memory only.
type SecretsManager struct {
	mu      sync.Mutex
	secrets map[string]secret // by ARN
}

type secret struct {
	name, arn, value, version string
	created                   time.Time
}

// NewSecretsManager returns a Secrets Manager stand-in with no secrets.
func NewSecretsManager() *SecretsManager {
	return &SecretsManager{secrets: map[string]secret{}}
}

// AddSecret stores value under name and returns the secret's ARN.
func (s *SecretsManager) AddSecret(name, value string) string {
	// Secrets Manager's ARNs end in a dash and six random characters.
	arn := "arn:aws:secretsmanager:" + sqsqueue.DefaultRegion + ":" + sqsqueue.DefaultAccountID + ":secret:" + name + "-" + uuid.NewString()[:6]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[arn] = secret{name: name, arn: arn, value: value, version: uuid.NewString(), created: time.Now()}
	return arn
}

// Handler is the HTTP handler of the Secrets Manager API.
func (s *SecretsManager) Handler() http.Handler {
	return awsJSON{target: "secretsmanager", version: "1.1", ops: map[string]jsonOp{
		"GetSecretValue": s.getSecretValue,
	}}
}

func (s *SecretsManager) getSecretValue(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct{ SecretId, VersionStage string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range s.secrets {
		if sec.arn == in.SecretId || sec.name == in.SecretId || strings.HasPrefix(sec.arn, in.SecretId+"-") {
			if in.VersionStage != "" && in.VersionStage != "AWSCURRENT" {
				break
			}
			return map[string]any{"ARN": sec.arn, "Name": sec.name, "SecretString": sec.value, "VersionId": sec.version,
				"VersionStages": []string{"AWSCURRENT"}, "CreatedDate": float64(sec.created.UnixNano()) / 1e9}, nil
		}
	}
	return nil, senderError("ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
}
