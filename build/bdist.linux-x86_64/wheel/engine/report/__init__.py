"""Reports of stored audits: what they show (view), rendered as HTML/Markdown/JSON/PDF (render, pdf), signed
(sign) and verified (verify, standalone_verify); requirement tables (export), OSCAL results (oscal) and the
terminal rendering of an answer (terminal)."""
