package secretkeytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// ServeHTTP answers the Secrets Manager API (awsJson1_1, X-Amz-Target
// secretsmanager.<Operation>) for DescribeSecret and GetSecretValue, so a
// real *secretsmanager.Client, pointed at the fake with
// AWS_ENDPOINT_URL_SECRETS_MANAGER, runs with its own retries and
// deserializers (and through awsfault's proxy). The signature is not
// checked.
func (f *SecretsManager) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var in struct {
		SecretID     *string `json:"SecretId"`
		VersionID    *string `json:"VersionId"`
		VersionStage *string `json:"VersionStage"`
	}
	if err := json.NewDecoder(req.Body).Decode(&in); err != nil {
		writeAPIError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	var (
		out any
		err error
	)
	switch target := req.Header.Get("X-Amz-Target"); target {
	case "secretsmanager.DescribeSecret":
		var d *secretsmanager.DescribeSecretOutput
		d, err = f.DescribeSecret(req.Context(), &secretsmanager.DescribeSecretInput{SecretId: in.SecretID})
		if err == nil {
			out = map[string]any{"ARN": arn(in.SecretID), "Name": aws.ToString(d.Name), "VersionIdsToStages": d.VersionIdsToStages}
		}
	case "secretsmanager.GetSecretValue":
		out, err = f.getByStage(req.Context(), in.SecretID, in.VersionID, in.VersionStage)
	default:
		writeAPIError(w, http.StatusBadRequest, "UnknownOperationException", fmt.Sprintf("operation %q is not served by the fake", target))
		return
	}
	if err != nil {
		if code, msg, ok := strings.Cut(err.Error(), ": "); ok && code == "ResourceNotFoundException" {
			writeAPIError(w, http.StatusBadRequest, code, msg)
			return
		}
		writeAPIError(w, http.StatusInternalServerError, "InternalServiceError", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

// getByStage reads a version by id, or the AWSCURRENT one.
func (f *SecretsManager) getByStage(ctx context.Context, id, versionID, stage *string) (map[string]any, error) {
	if versionID == nil {
		if s := aws.ToString(stage); s != "" && s != "AWSCURRENT" {
			return nil, errors.New("ResourceNotFoundException: only AWSCURRENT is served by stage")
		}
		f.mu.Lock()
		versionID = aws.String(fmt.Sprintf("v%d", len(f.versions)-1))
		f.mu.Unlock()
	}
	v, err := f.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: id, VersionId: versionID})
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"ARN": arn(id), "Name": aws.ToString(id), "SecretString": aws.ToString(v.SecretString),
		"VersionId": aws.ToString(v.VersionId), "CreatedDate": 1.7e9,
	}, nil
}

func arn(id *string) string {
	return "arn:aws:secretsmanager:us-east-1:111122223333:secret:" + aws.ToString(id)
}

func writeAPIError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}
