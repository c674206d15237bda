package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the backup types.
const GroupName = "backups.cozystack.io"

// GroupVersion is the API group and version of these types.
var GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// ProtocolVersion is the driver protocol this package describes. A
// BackupDriver lists the protocol versions it speaks in
// spec.protocolVersions; the core binds a job only to a driver that
// speaks one of the core's (contract k7, "Protocol versions").
const ProtocolVersion = "v1alpha1"

var (
	// SchemeBuilder registers the types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&BackupClass{}, &BackupClassList{},
		&Plan{}, &PlanList{},
		&BackupJob{}, &BackupJobList{},
		&Backup{}, &BackupList{},
		&RestoreJob{}, &RestoreJobList{},
		&BackupDriver{}, &BackupDriverList{},
		&BackupGrant{}, &BackupGrantList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
