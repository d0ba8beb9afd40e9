//! The one table of source file extensions: for each, the dataset's language
//! (`dataset::Language`'s name) and the LSP language id an editor sends for it
//! (`textDocument/didOpen`). The dataset, the profiles and `--server` flags all read it,
//! so a new extension is added here once.

/// One extension's facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extension {
    /// Without the dot: `py`.
    pub ext: &'static str,
    /// The dataset's language: `dataset::Language::name`.
    pub language: &'static str,
    /// The LSP language id: `typescriptreact` for `tsx`, `python` for `py`.
    pub lsp_id: &'static str,
}

const fn e(ext: &'static str, language: &'static str, lsp_id: &'static str) -> Extension {
    Extension {
        ext,
        language,
        lsp_id,
    }
}

/// Every extension typist knows, grouped by language.
pub const EXTENSIONS: &[Extension] = &[
    e("py", "python", "python"),
    e("pyi", "python", "python"),
    e("ts", "typescript", "typescript"),
    e("mts", "typescript", "typescript"),
    e("cts", "typescript", "typescript"),
    e("tsx", "typescript", "typescriptreact"),
    e("js", "javascript", "javascript"),
    e("mjs", "javascript", "javascript"),
    e("cjs", "javascript", "javascript"),
    e("jsx", "javascript", "javascriptreact"),
    e("c", "c", "c"),
    e("h", "c", "c"),
    e("cc", "cpp", "cpp"),
    e("cpp", "cpp", "cpp"),
    e("cxx", "cpp", "cpp"),
    e("hpp", "cpp", "cpp"),
    e("hh", "cpp", "cpp"),
    e("hxx", "cpp", "cpp"),
    e("go", "go", "go"),
    e("rs", "rust", "rust"),
    e("java", "java", "java"),
    e("kt", "kotlin", "kotlin"),
    e("kts", "kotlin", "kotlin"),
    e("cs", "csharp", "csharp"),
];

/// The facts of an extension (without the dot), when typist knows it.
pub fn extension(ext: &str) -> Option<&'static Extension> {
    EXTENSIONS.iter().find(|e| e.ext == ext)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_extension_once() {
        let mut seen: Vec<&str> = EXTENSIONS.iter().map(|e| e.ext).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), EXTENSIONS.len());
        assert_eq!(extension("tsx").unwrap().lsp_id, "typescriptreact");
        assert_eq!(extension("tsx").unwrap().language, "typescript");
        assert!(extension("txt").is_none());
    }
}
