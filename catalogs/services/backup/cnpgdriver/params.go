package cnpgdriver

import (
	"fmt"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"

	"cozystack.io/sdk/backup/driver"
)

// DefaultWaitTimeout bounds CNPG's waiting phases when the parameters set
// no waitTimeout.
const DefaultWaitTimeout = 10 * time.Minute

// Credential keys the credentials Secret must hold (CNPG's S3 convention).
const (
	KeyAccessKeyID     = "ACCESS_KEY_ID"
	KeySecretAccessKey = "ACCESS_SECRET_KEY"
)

// Parameters are the strategy parameters of the kind CNPG (see the package
// documentation).
type Parameters struct {
	// Method of the CNPG Backup: barmanObjectStore (default) or
	// volumeSnapshot.
	Method string `json:"method,omitempty"`
	// BarmanObjectStore is the object-store target (method
	// barmanObjectStore).
	BarmanObjectStore *ObjectStore `json:"barmanObjectStore,omitempty"`
	// WaitTimeout bounds CNPG's waiting phases (Go duration); default 10m.
	WaitTimeout string `json:"waitTimeout,omitempty"`
}

// ObjectStore is a barman object-store target.
type ObjectStore struct {
	// DestinationPath, e.g. s3://bucket/path. Required.
	DestinationPath string `json:"destinationPath"`
	// EndpointURL overrides the S3 endpoint.
	EndpointURL string `json:"endpointURL,omitempty"`
	// CredentialsSecret names a Secret in the driver's namespace with the
	// keys ACCESS_KEY_ID and ACCESS_SECRET_KEY. Required.
	CredentialsSecret string `json:"credentialsSecret"`
}

// decode decodes and checks the parameters: unknown keys and invalid
// values are *driver.ParameterError.
func decode(run *driver.Run) (*Parameters, error) {
	p := &Parameters{}
	if err := driver.DecodeParameters(run.Parameters(), p); err != nil {
		return nil, err
	}
	return p, p.validate()
}

func (p *Parameters) validate() error {
	switch cnpgv1.BackupMethod(p.Method) {
	case "":
		p.Method = string(cnpgv1.BackupMethodBarmanObjectStore)
	case cnpgv1.BackupMethodBarmanObjectStore, cnpgv1.BackupMethodVolumeSnapshot:
	default:
		return &driver.ParameterError{Field: "method", Message: fmt.Sprintf("%q is not a method of this driver: use %s or %s",
			p.Method, cnpgv1.BackupMethodBarmanObjectStore, cnpgv1.BackupMethodVolumeSnapshot)}
	}
	if p.Method == string(cnpgv1.BackupMethodBarmanObjectStore) {
		switch {
		case p.BarmanObjectStore == nil:
			return &driver.ParameterError{Field: "barmanObjectStore", Message: "required with method barmanObjectStore: set destinationPath and credentialsSecret"}
		case p.BarmanObjectStore.DestinationPath == "":
			return &driver.ParameterError{Field: "barmanObjectStore.destinationPath", Message: "required, e.g. s3://bucket/path"}
		case p.BarmanObjectStore.CredentialsSecret == "":
			return &driver.ParameterError{Field: "barmanObjectStore.credentialsSecret", Message: "required: a Secret in the driver's namespace with keys " + KeyAccessKeyID + " and " + KeySecretAccessKey}
		}
	}
	if _, err := p.waitTimeout(); err != nil {
		return &driver.ParameterError{Field: "waitTimeout", Message: err.Error()}
	}
	return nil
}

func (p *Parameters) waitTimeout() (time.Duration, error) {
	if p.WaitTimeout == "" {
		return DefaultWaitTimeout, nil
	}
	d, err := time.ParseDuration(p.WaitTimeout)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s is not positive", p.WaitTimeout)
	}
	return d, nil
}
