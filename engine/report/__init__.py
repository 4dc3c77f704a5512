"""Reports of stored audits: what they show (view), rendered as HTML/Markdown/JSON/PDF (render, pdf), signed
(sign) and verified (verify, with the outside auditor's `engine.trail.standalone_verify`); requirement tables
(export) and the terminal rendering of an answer (terminal). A batch's OSCAL results are `engine.batch.oscal`."""
