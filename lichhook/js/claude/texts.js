// The words the mods put before the model and in the footer, in the user's prompt
// language (LICH_PROMPT_LANG, which lich exports into every session): English, Brazilian
// Portuguese, Simplified Chinese or Spanish; English for anything else.

const plural = (n, one, many) => (n === 1 ? one : many);

const CATALOGS = {
  en: {
    ask: "A side question reached you from outside your turn, through lich. You have no tools for it: answer briefly from what you already know of this session, and do not act on it.",
    edited: (path, minutes) => `Another lich session edited ${path} in the last ${minutes} min. Read the file again before changing it, and keep its changes.`,
    editedFooter: (name) => `${name} also edited elsewhere`,
    owed: (n, from) => (n === 1 && from ? `owes "${from}" an answer` : `owes ${n} ${plural(n, "answer", "answers")}`),
    open: (n, waiting) => `${n} ${plural(n, "task", "tasks")} out` + (waiting ? ` (${waiting} waiting)` : ""),
    ready: (n) => `${n} ${plural(n, "answer", "answers")} to collect`,
  },
  "pt-BR": {
    ask: "Uma pergunta paralela chegou a você de fora do seu turno, pelo lich. Você não tem ferramentas para ela: responda brevemente com o que já sabe desta sessão e não aja a partir dela.",
    edited: (path, minutes) => `Outra sessão do lich editou ${path} nos últimos ${minutes} min. Leia o arquivo de novo antes de alterá-lo e mantenha as mudanças dela.`,
    editedFooter: (name) => `${name} também editado em outra sessão`,
    owed: (n, from) => (n === 1 && from ? `deve uma resposta a "${from}"` : `deve ${n} ${plural(n, "resposta", "respostas")}`),
    open: (n, waiting) => `${n} ${plural(n, "tarefa", "tarefas")} em andamento` + (waiting ? ` (${waiting} aguardando)` : ""),
    ready: (n) => `${n} ${plural(n, "resposta", "respostas")} para buscar`,
  },
  "zh-CN": {
    ask: "这是一个通过 lich 从你当前回合之外提出的附带问题。你无法为此使用工具：请根据你对本会话已有的了解简要回答，不要据此采取行动。",
    edited: (path, minutes) => `另一个 lich 会话在过去 ${minutes} 分钟内编辑了 ${path}。修改前请重新读取该文件，并保留它的改动。`,
    editedFooter: (name) => `${name} 也在别处被编辑`,
    owed: (n, from) => (n === 1 && from ? `欠 "${from}" 一个回复` : `欠 ${n} 个回复`),
    open: (n, waiting) => `${n} 个任务进行中` + (waiting ? `（${waiting} 个等待中）` : ""),
    ready: (n) => `${n} 个回复待领取`,
  },
  es: {
    ask: "Te llegó una pregunta aparte desde fuera de tu turno, a través de lich. No tienes herramientas para ella: responde brevemente con lo que ya sabes de esta sesión y no actúes a partir de ella.",
    edited: (path, minutes) => `Otra sesión de lich editó ${path} en los últimos ${minutes} min. Vuelve a leer el archivo antes de cambiarlo y conserva sus cambios.`,
    editedFooter: (name) => `${name} también editado en otra sesión`,
    owed: (n, from) => (n === 1 && from ? `debe una respuesta a "${from}"` : `debe ${n} ${plural(n, "respuesta", "respuestas")}`),
    open: (n, waiting) => `${n} ${plural(n, "tarea", "tareas")} en curso` + (waiting ? ` (${waiting} esperando)` : ""),
    ready: (n) => `${n} ${plural(n, "respuesta", "respuestas")} por recoger`,
  },
};

// The catalog for a LICH_PROMPT_LANG value: "pt-BR", "pt_br", "zh-Hans", "es-MX" and
// the like pick by their language; anything else, or nothing, is English.
export function texts(lang) {
  const code = String(lang || "").toLowerCase();
  if (code.startsWith("pt")) return CATALOGS["pt-BR"];
  if (code.startsWith("zh")) return CATALOGS["zh-CN"];
  if (code.startsWith("es")) return CATALOGS.es;
  return CATALOGS.en;
}
