package velerodriver

import (
	"context"
	"fmt"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// Parameters are the strategy parameters of a BackupClass for the kind
// Velero, decoded strictly (an unknown key is InvalidParameters naming it).
//
//	storageLocation: default            # required: the Velero BackupStorageLocation
//	volumeSnapshotLocations: [default]  # optional
//	snapshotVolumes: true               # optional, Velero's default when unset
//	snapshotMoveData: false             # optional
//	defaultVolumesToFsBackup: false     # optional
//	releasePrefix: vm-instance-         # optional for VMInstance and VMDisk
//	ttl: 720h                           # optional: Velero's TTL when no retention bounds it
//	startTimeout: 30m                   # optional: longest wait for Velero to start a run
//	restore:
//	  existingResourcePolicy: none      # optional, InPlace only: none | update
type Parameters struct {
	StorageLocation          string   `json:"storageLocation"`
	VolumeSnapshotLocations  []string `json:"volumeSnapshotLocations,omitempty"`
	SnapshotVolumes          *bool    `json:"snapshotVolumes,omitempty"`
	SnapshotMoveData         *bool    `json:"snapshotMoveData,omitempty"`
	DefaultVolumesToFsBackup *bool    `json:"defaultVolumesToFsBackup,omitempty"`
	// ReleasePrefix is the application's Helm release prefix (its
	// ApplicationDefinition's release.prefix); known for the kinds of
	// this catalog (selection.go), required for any other kind.
	ReleasePrefix string `json:"releasePrefix,omitempty"`
	// TTL is Velero's spec.ttl when the job's retention gives no bound
	// (ttl.go); default MaxTTL.
	TTL *metav1.Duration `json:"ttl,omitempty"`
	// StartTimeout bounds the phases in which Velero has not started the
	// run yet (phases.go); default DefaultStartTimeout.
	StartTimeout *metav1.Duration  `json:"startTimeout,omitempty"`
	Restore      RestoreParameters `json:"restore,omitempty"`
}

// RestoreParameters tune restores.
type RestoreParameters struct {
	// ExistingResourcePolicy of an InPlace restore: "none" (Velero's
	// default: an object that exists is left as it is) or "update".
	// A NewApplication restore always uses "none" (the source is never
	// touched).
	ExistingResourcePolicy velerov1.PolicyType `json:"existingResourcePolicy,omitempty"`
}

// DefaultStartTimeout is how long Velero may leave a run in a phase before
// it starts (New, Queued, ReadyToStart, none yet) unless the parameters
// say otherwise.
const DefaultStartTimeout = 30 * time.Minute

// decodeParameters decodes and validates s's parameters: *driver.ParameterError
// for an unknown key or an invalid value.
func decodeParameters(s v1alpha1.Strategy) (*Parameters, error) {
	p := &Parameters{}
	if err := driver.DecodeParameters(s.Parameters, p); err != nil {
		return nil, err
	}
	bad := func(field, format string, args ...any) error {
		return &driver.ParameterError{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if p.StorageLocation == "" {
		return nil, bad("storageLocation", "required: the name of a Velero BackupStorageLocation")
	}
	if errs := validation.IsDNS1123Subdomain(p.StorageLocation); len(errs) > 0 {
		return nil, bad("storageLocation", "%q is not a BackupStorageLocation name: %v", p.StorageLocation, errs)
	}
	for i, l := range p.VolumeSnapshotLocations {
		if errs := validation.IsDNS1123Subdomain(l); len(errs) > 0 {
			return nil, bad(fmt.Sprintf("volumeSnapshotLocations[%d]", i), "%q is not a VolumeSnapshotLocation name: %v", l, errs)
		}
	}
	if p.TTL != nil && (p.TTL.Duration < time.Hour || p.TTL.Duration > MaxTTL) {
		return nil, bad("ttl", "%s is outside [1h, %s]", p.TTL.Duration, MaxTTL)
	}
	if p.StartTimeout != nil && (p.StartTimeout.Duration < time.Second || p.StartTimeout.Duration > 24*time.Hour) {
		return nil, bad("startTimeout", "%s is outside [1s, 24h]", p.StartTimeout.Duration)
	}
	switch p.Restore.ExistingResourcePolicy {
	case "", velerov1.PolicyTypeNone, velerov1.PolicyTypeUpdate:
	default:
		return nil, bad("restore.existingResourcePolicy", "%q: want %q or %q", p.Restore.ExistingResourcePolicy, velerov1.PolicyTypeNone, velerov1.PolicyTypeUpdate)
	}
	return p, nil
}

func (p *Parameters) startTimeout() time.Duration {
	if p.StartTimeout != nil {
		return p.StartTimeout.Duration
	}
	return DefaultStartTimeout
}

// ValidateParameters implements driver.Driver: strict decoding for every
// operation (there are no templates).
func (d *Driver) ValidateParameters(_ context.Context, _ driver.Operation, s v1alpha1.Strategy) error {
	_, err := decodeParameters(s)
	return err
}
