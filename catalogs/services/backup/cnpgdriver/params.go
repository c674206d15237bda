package cnpgdriver

import (
	"fmt"
	"strings"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	"k8s.io/apimachinery/pkg/util/validation"

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
	// VolumeSnapshot configures the snapshots (method volumeSnapshot;
	// optional: absent, CNPG's defaults apply).
	VolumeSnapshot *VolumeSnapshot `json:"volumeSnapshot,omitempty"`
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

// VolumeSnapshot configures volume-snapshot backups.
type VolumeSnapshot struct {
	// ClassName is the VolumeSnapshotClass of the snapshots, set as the
	// Cluster's spec.backup.volumeSnapshot.className; empty, the cluster's
	// default VolumeSnapshotClass (CNPG's default).
	ClassName string `json:"className,omitempty"`
	// Online sets the CNPG Backup's spec.online: true for an online (hot)
	// snapshot, which needs the Cluster's WAL archiving (an object store);
	// false for an offline (cold) one, taken on a standby when the Cluster
	// has one, else on the primary, stopped for the snapshot. Unset, CNPG's
	// default applies (the Cluster's spec.backup.volumeSnapshot.online,
	// itself true by default).
	Online *bool `json:"online,omitempty"`
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
		if p.VolumeSnapshot != nil {
			return &driver.ParameterError{Field: "volumeSnapshot", Message: "applies to method volumeSnapshot only: remove it, or set method: volumeSnapshot"}
		}
		switch {
		case p.BarmanObjectStore == nil:
			return &driver.ParameterError{Field: "barmanObjectStore", Message: "required with method barmanObjectStore: set destinationPath and credentialsSecret"}
		case p.BarmanObjectStore.DestinationPath == "":
			return &driver.ParameterError{Field: "barmanObjectStore.destinationPath", Message: "required, e.g. s3://bucket/path"}
		case p.BarmanObjectStore.CredentialsSecret == "":
			return &driver.ParameterError{Field: "barmanObjectStore.credentialsSecret", Message: "required: a Secret in the driver's namespace with keys " + KeyAccessKeyID + " and " + KeySecretAccessKey}
		}
	}
	if p.Method == string(cnpgv1.BackupMethodVolumeSnapshot) && p.BarmanObjectStore != nil {
		return &driver.ParameterError{Field: "barmanObjectStore", Message: "applies to method barmanObjectStore only: remove it, or set method: barmanObjectStore " +
			"(for hot snapshots with WAL archiving, a class with method barmanObjectStore points the Cluster at the object store)"}
	}
	if v := p.VolumeSnapshot; v != nil && v.ClassName != "" {
		if errs := validation.IsDNS1123Subdomain(v.ClassName); len(errs) > 0 {
			return &driver.ParameterError{Field: "volumeSnapshot.className", Message: fmt.Sprintf("%q is not a VolumeSnapshotClass name: %s", v.ClassName, strings.Join(errs, "; "))}
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
