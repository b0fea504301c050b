package secretkey

import "errors"

// ErrNoKeySource means neither a secret id nor a local key was configured.
var ErrNoKeySource = errors.New("no API key source: set a Secrets Manager secret id, or a key for local runs")

// FromSettings picks the key source the way both functions do: the Secrets
// Manager secret when secretID is set (the deployed path), else localKey
// (local runs only). newClient is called only when the secret is used, so a
// local run needs no AWS configuration.
func FromSettings(secretID, localKey string, newClient func() (SecretsManagerAPI, error)) (Provider, error) {
	switch {
	case secretID != "":
		client, err := newClient()
		if err != nil {
			return nil, err
		}
		return NewSecretsManager(client, secretID)
	case localKey != "":
		return Static(localKey), nil
	}
	return nil, ErrNoKeySource
}
