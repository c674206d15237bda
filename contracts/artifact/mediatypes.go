package artifact

// Media types and annotations of a catalog artifact (format v1, README.md).
const (
	// ArtifactType is the manifest's artifactType: this manifest is a
	// catalog in format v1.
	ArtifactType = "application/vnd.cozystack.catalog.v1"
	// ConfigMediaType is the media type of the config blob, the catalog
	// metadata (Catalog) as JSON.
	ConfigMediaType = "application/vnd.cozystack.catalog.config.v1+json"
	// ChartMediaType is the media type of a chart layer: a Helm chart archive
	// (gzip-compressed tar), Helm's own chart layer media type, so Helm and
	// Flux tooling recognise the layers.
	ChartMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	// DefinitionMediaType is the media type of a definitions layer: one
	// YAML file of applicationdefinitions/ (one or more documents: the
	// catalog's ApplicationDefinitions and the admission policies shipped
	// with them), as the catalog directory has it.
	DefinitionMediaType = "application/vnd.cozystack.catalog.definitions.v1+yaml"
	// ManifestMediaType is the manifest's media type: an OCI image manifest
	// (image-spec v1.1, which defines artifactType).
	ManifestMediaType = "application/vnd.oci.image.manifest.v1+json"
)

// Annotation keys. The org.opencontainers.image.* keys are the OCI
// image-spec's pre-defined ones.
const (
	// AnnotationTitle on a chart layer is the chart path (Chart.Path), the
	// chart directory relative to the catalog directory, e.g.
	// "charts/postgres"; on a definitions layer the file's path
	// (Definition.Path), e.g. "applicationdefinitions/postgres.yaml". On
	// the manifest it is the catalog name.
	AnnotationTitle = "org.opencontainers.image.title"
	// AnnotationVersion on the manifest is the catalog version.
	AnnotationVersion = "org.opencontainers.image.version"
	// AnnotationCreated on the manifest is the build time, RFC 3339.
	AnnotationCreated = "org.opencontainers.image.created"
	// AnnotationChartName and AnnotationChartVersion on a chart layer are
	// the name and version in the chart's Chart.yaml.
	AnnotationChartName    = "io.cozystack.catalog.chart.name"
	AnnotationChartVersion = "io.cozystack.catalog.chart.version"
	// AnnotationMinPlatformVersion on the manifest repeats the config's
	// minPlatformVersion, so a registry listing shows it without a fetch.
	AnnotationMinPlatformVersion = "io.cozystack.catalog.min-platform-version"
)
