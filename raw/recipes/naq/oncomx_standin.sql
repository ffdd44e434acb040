-- A stand-in for the OncoMX schema that OncoMX-NAQ's questions were written against.
-- The real OncoMX database (ScienceBenchmark: 25 tables, 106 columns) is not public
-- here, so this file is the project's own sketch of the kinds of data the Query
-- Carefully paper describes: cancer biomarkers (EDRN and FDA), genes, their expression
-- in healthy and cancerous tissue, disease mutations, anatomy and species. Nothing is
-- executed against it: it gives the items a schema to be read and exported with.
CREATE TABLE species (
    speciesid INTEGER PRIMARY KEY,
    species TEXT,
    genus TEXT,
    common_name TEXT
);

CREATE TABLE disease (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE anatomical_entity (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE cancer_tissue (
    doid INTEGER NOT NULL,
    uberon_anatomical_id TEXT NOT NULL,
    PRIMARY KEY (doid, uberon_anatomical_id),
    FOREIGN KEY (doid) REFERENCES disease (id),
    FOREIGN KEY (uberon_anatomical_id) REFERENCES anatomical_entity (id)
);

CREATE TABLE xref_gene_ensembl (
    ensembl_gene_id TEXT PRIMARY KEY,
    gene_symbol TEXT NOT NULL,
    speciesid INTEGER,
    FOREIGN KEY (speciesid) REFERENCES species (speciesid)
);

CREATE TABLE biomarker (
    id TEXT PRIMARY KEY,
    gene_symbol TEXT,
    biomarker_description TEXT,
    biomarker_id TEXT,
    test_is_a_panel TEXT
);

CREATE TABLE biomarker_alias (
    biomarker_internal_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    FOREIGN KEY (biomarker_internal_id) REFERENCES biomarker (id)
);

CREATE TABLE biomarker_edrn (
    id TEXT NOT NULL,
    uberon_anatomical_id TEXT,
    qa_state TEXT,
    phase TEXT,
    biomarker_title TEXT,
    biomarker_type TEXT,
    FOREIGN KEY (id) REFERENCES biomarker (id),
    FOREIGN KEY (uberon_anatomical_id) REFERENCES anatomical_entity (id)
);

CREATE TABLE biomarker_fda (
    id TEXT NOT NULL,
    test_trade_name TEXT,
    test_submission TEXT,
    doid INTEGER,
    FOREIGN KEY (id) REFERENCES biomarker (id),
    FOREIGN KEY (doid) REFERENCES disease (id)
);

CREATE TABLE biomarker_fda_test (
    test_submission TEXT NOT NULL,
    test_trade_name TEXT NOT NULL,
    test_manufacturer TEXT,
    test_approval_status TEXT,
    test_study_design TEXT,
    platform_method TEXT,
    specimen_type TEXT,
    clinical_significance TEXT,
    doid INTEGER,
    PRIMARY KEY (test_submission, test_trade_name),
    FOREIGN KEY (doid) REFERENCES disease (id)
);

CREATE TABLE differential_expression (
    gene_symbol TEXT NOT NULL,
    doid INTEGER NOT NULL,
    log2fc REAL,
    pvalue REAL,
    adjpvalue REAL,
    statistical_significance TEXT,
    expression_change_direction TEXT,
    subjects_up INTEGER,
    subjects_down INTEGER,
    subjects_total INTEGER,
    FOREIGN KEY (doid) REFERENCES disease (id)
);

CREATE TABLE healthy_expression (
    ensembl_gene_id TEXT NOT NULL,
    uberon_anatomical_id TEXT NOT NULL,
    expression_level_gene_relative TEXT,
    expression_level_anatomical_relative TEXT,
    expression_score REAL,
    call_quality TEXT,
    PRIMARY KEY (ensembl_gene_id, uberon_anatomical_id),
    FOREIGN KEY (ensembl_gene_id) REFERENCES xref_gene_ensembl (ensembl_gene_id),
    FOREIGN KEY (uberon_anatomical_id) REFERENCES anatomical_entity (id)
);

CREATE TABLE disease_mutation (
    id INTEGER PRIMARY KEY,
    ensembl_transcript_id TEXT,
    gene_symbol TEXT,
    doid INTEGER,
    chromosome_id TEXT,
    chromosome_pos INTEGER,
    ref_nt TEXT,
    alt_nt TEXT,
    ref_aa TEXT,
    alt_aa TEXT,
    aa_pos_uniprotkb INTEGER,
    cds_pos INTEGER,
    mutation_freq INTEGER,
    data_source TEXT,
    FOREIGN KEY (doid) REFERENCES disease (id)
);

CREATE TABLE disease_mutation_tissue (
    disease_mutation_id INTEGER NOT NULL,
    uberon_anatomical_id TEXT NOT NULL,
    FOREIGN KEY (disease_mutation_id) REFERENCES disease_mutation (id),
    FOREIGN KEY (uberon_anatomical_id) REFERENCES anatomical_entity (id)
);

CREATE TABLE disease_mutation_impact_prediction (
    disease_mutation_id INTEGER NOT NULL,
    site_prediction TEXT,
    tool TEXT,
    probability REAL,
    FOREIGN KEY (disease_mutation_id) REFERENCES disease_mutation (id)
);
