// Resolves after two animation frames: what VS Code had to render by then is drawn.
new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))
